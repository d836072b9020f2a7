package sigcheck

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxBundleBytes bounds a bundle read: a key-signed bundle is about 1 KiB.
const MaxBundleBytes = 64 << 10

// Keys verifies key-signed Sigstore bundles (a messageSignature over the
// artifact's SHA-256, its public key named by hint) with the standard
// library alone: this is the whole of what a bundle signed by `loadout push
// --sign-key` needs, and what the sidecar can link (package doc). A bundle
// of another shape (a DSSE envelope, a certificate, a transparency-log
// entry) is refused, never half-checked: the check fails closed.
type Keys struct {
	byHint map[string]*ecdsa.PublicKey
	ids    []string
}

var _ Verifier = (*Keys)(nil)

// ParseKeys reads PEM public keys (PKIX "PUBLIC KEY", ECDSA), at least one,
// from one or more PEM texts. Keys of another type are refused with the
// reason: a Sigstore message signature by Ed25519 signs the artifact's
// bytes, not its digest, so it cannot bind an OCI manifest digest.
func ParseKeys(pems ...[]byte) (*Keys, error) {
	k := &Keys{byHint: map[string]*ecdsa.PublicKey{}}
	for i, p := range pems {
		block, rest := pem.Decode(p)
		if block == nil {
			return nil, fmt.Errorf("key %d: no PEM block: want a PEM public key (-----BEGIN PUBLIC KEY-----)", i+1)
		}
		for ; block != nil; block, rest = pem.Decode(rest) {
			if block.Type != "PUBLIC KEY" {
				return nil, fmt.Errorf("key %d: PEM block %q, want PUBLIC KEY", i+1, block.Type)
			}
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("key %d: %w", i+1, err)
			}
			ec, ok := pub.(*ecdsa.PublicKey)
			if !ok {
				return nil, fmt.Errorf("key %d: a %T, want an ECDSA public key (what `loadout push --sign-key` signs with)", i+1, pub)
			}
			hint := KeyID(block.Bytes)
			if _, dup := k.byHint[hint]; !dup {
				k.byHint[hint] = ec
				k.ids = append(k.ids, hint)
			}
		}
		if strings.TrimSpace(string(rest)) != "" {
			return nil, fmt.Errorf("key %d: text after the last PEM block", i+1)
		}
	}
	if len(k.byHint) == 0 {
		return nil, errors.New("no public key")
	}
	slices.Sort(k.ids)
	return k, nil
}

// KeyID names a public key by its PKIX (DER) encoding: base64 of its
// SHA-256, as Sigstore's key hints do, so a bundle's hint is the id of the
// key that signed it.
func KeyID(pkixDER []byte) string {
	sum := sha256.Sum256(pkixDER)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// IDs are the keys' ids, sorted.
func (k *Keys) IDs() []string { return slices.Clone(k.ids) }

// Verify checks that one of bundles (JSON) signs the artifact whose
// manifest digest is digest ("sha256:<hex>") with one of the keys, offline.
// No bundle is ReasonUnsigned; otherwise the refusal names one bundle's
// reason, a digest mismatch before an untrusted signer (the artifact
// changed after signing says more than "another key").
func (k *Keys) Verify(digest string, bundles [][]byte) error {
	want, err := parseDigest(digest)
	if err != nil {
		return err
	}
	if len(bundles) == 0 {
		return &Error{Reason: ReasonUnsigned, Err: fmt.Errorf("no Sigstore bundle is attached to %s: only skills signed by a trusted key are accepted", digest)}
	}
	var refusals []*Error
	for _, raw := range bundles {
		err := k.verifyOne(want, raw)
		if err == nil {
			return nil
		}
		refusals = append(refusals, err)
	}
	if i := slices.IndexFunc(refusals, func(e *Error) bool { return e.Reason == ReasonDigestMismatch }); i >= 0 {
		return refusals[i]
	}
	return refusals[0]
}

func parseDigest(digest string) ([]byte, error) {
	hexDigest, ok := strings.CutPrefix(digest, "sha256:")
	want, err := hex.DecodeString(hexDigest)
	if !ok || err != nil || len(want) != sha256.Size {
		return nil, &Error{Reason: ReasonInvalidBundle, Err: fmt.Errorf("digest %q is not sha256:<64 hex>", digest)}
	}
	return want, nil
}

// keyBundle is the part of a Sigstore bundle (protobuf-specs
// dev.sigstore.bundle.v1.Bundle, JSON) a key-signed bundle uses. Fields
// of other shapes are read only to refuse them.
type keyBundle struct {
	MediaType            string `json:"mediaType"`
	VerificationMaterial struct {
		PublicKey *struct {
			Hint string `json:"hint"`
		} `json:"publicKey"`
		Certificate          json.RawMessage `json:"certificate"`
		X509CertificateChain json.RawMessage `json:"x509CertificateChain"`
	} `json:"verificationMaterial"`
	MessageSignature *struct {
		MessageDigest struct {
			Algorithm string `json:"algorithm"`
			Digest    []byte `json:"digest"`
		} `json:"messageDigest"`
		Signature []byte `json:"signature"`
	} `json:"messageSignature"`
	DSSEEnvelope json.RawMessage `json:"dsseEnvelope"`
}

// bundleMediaTypes are the bundle versions whose key-signed form is the
// one keyBundle reads.
var bundleMediaTypes = []string{
	BundleMediaType,
	"application/vnd.dev.sigstore.bundle+json;version=0.3",
	"application/vnd.dev.sigstore.bundle+json;version=0.2",
}

func (k *Keys) verifyOne(want, raw []byte) *Error {
	if len(raw) > MaxBundleBytes {
		return &Error{Reason: ReasonInvalidBundle, Err: fmt.Errorf("bundle of %d bytes, over the limit of %d", len(raw), MaxBundleBytes)}
	}
	var b keyBundle
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&b); err != nil {
		return &Error{Reason: ReasonInvalidBundle, Err: err}
	}
	switch {
	case !slices.Contains(bundleMediaTypes, b.MediaType):
		return &Error{Reason: ReasonInvalidBundle, Err: fmt.Errorf("media type %q is not a Sigstore bundle this verifier reads", b.MediaType)}
	case b.DSSEEnvelope != nil || b.MessageSignature == nil:
		return &Error{Reason: ReasonInvalidBundle, Err: errors.New("want a message signature (a DSSE envelope is not what loadout push signs)")}
	case b.VerificationMaterial.PublicKey == nil || b.VerificationMaterial.Certificate != nil || b.VerificationMaterial.X509CertificateChain != nil:
		return &Error{Reason: ReasonInvalidBundle, Err: errors.New("want a signature by a public key, not by a certificate")}
	case b.MessageSignature.MessageDigest.Algorithm != "SHA2_256":
		return &Error{Reason: ReasonInvalidBundle, Err: fmt.Errorf("message digest algorithm %q, want SHA2_256", b.MessageSignature.MessageDigest.Algorithm)}
	}
	ms := b.MessageSignature
	if got := ms.MessageDigest.Digest; !bytes.Equal(got, want) {
		return &Error{Reason: ReasonDigestMismatch, Err: fmt.Errorf("the bundle signs sha256:%x, not the artifact's sha256:%x: the artifact changed after signing", got, want)}
	}
	hint := b.VerificationMaterial.PublicKey.Hint
	pub, ok := k.byHint[hint]
	if !ok {
		return &Error{Reason: ReasonUntrustedSigner, Err: fmt.Errorf("signed by key %q, which is not trusted here", hint)}
	}
	// The signature is over the digest (sigstore's message signature signs
	// the prehashed artifact), so the digest checked above is what it binds.
	if !ecdsa.VerifyASN1(pub, want, ms.Signature) {
		return &Error{Reason: ReasonUntrustedSigner, Err: fmt.Errorf("the signature does not verify with trusted key %s", hint)}
	}
	return nil
}

// NormalKey reads one PEM public key as ParseKeys does and returns it
// re-encoded from its DER (so two spellings of a key are one key) and its
// id (KeyID).
func NormalKey(pemText []byte) (normal, id string, err error) {
	block, rest := pem.Decode(pemText)
	if block == nil {
		return "", "", errors.New("no PEM block: want a PEM public key (-----BEGIN PUBLIC KEY-----)")
	}
	if strings.TrimSpace(string(rest)) != "" {
		return "", "", errors.New("one PEM public key per entry")
	}
	if _, err := ParseKeys(pemText); err != nil {
		return "", "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: block.Bytes})), KeyID(block.Bytes), nil
}
