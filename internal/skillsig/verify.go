package skillsig

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loadout-dev/loadout/internal/sigcheck"
)

// The reasons and the error of a refused signature are sigcheck's, which
// the sidecar links without the Sigstore libraries.
const (
	ReasonUnsigned        = sigcheck.ReasonUnsigned
	ReasonUntrustedSigner = sigcheck.ReasonUntrustedSigner
	ReasonDigestMismatch  = sigcheck.ReasonDigestMismatch
	ReasonInvalidBundle   = sigcheck.ReasonInvalidBundle
)

// Error is a refused signature (sigcheck.Error).
type Error = sigcheck.Error

// Trust verifies as a sigcheck.Verifier.
var _ sigcheck.Verifier = (*Trust)(nil)

// MaxBundleBytes bounds a bundle read: a key-signed bundle is about 1 KiB.
const MaxBundleBytes = 64 << 10

// Trust is the public keys a namespace accepts skill signatures from.
type Trust struct {
	keys     map[string]*root.ExpiringKey
	verifier *verify.Verifier
}

// ParseTrust reads PEM public keys (PKIX "PUBLIC KEY"), at least one.
func ParseTrust(pems ...[]byte) (*Trust, error) {
	t := &Trust{keys: map[string]*root.ExpiringKey{}}
	for i, p := range pems {
		for block, rest := pem.Decode(p); block != nil; block, rest = pem.Decode(rest) {
			if block.Type != "PUBLIC KEY" {
				return nil, fmt.Errorf("key file %d: PEM block %q, want PUBLIC KEY", i+1, block.Type)
			}
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("key file %d: %w", i+1, err)
			}
			if err := t.add(pub); err != nil {
				return nil, fmt.Errorf("key file %d: %w", i+1, err)
			}
		}
	}
	if len(t.keys) == 0 {
		return nil, errors.New("no public key")
	}
	material := root.NewTrustedPublicKeyMaterialFromMapping(t.keys)
	v, err := verify.NewVerifier(material, verify.WithNoObserverTimestamps())
	if err != nil {
		return nil, err
	}
	t.verifier = v
	return t, nil
}

func (t *Trust) add(pub crypto.PublicKey) error {
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return err
	}
	hint, err := keyHint(pub)
	if err != nil {
		return err
	}
	t.keys[hint] = root.NewExpiringKey(v, time.Time{}, time.Time{})
	return nil
}

// Verify checks that one of bundles (JSON) signs the artifact whose
// manifest digest is digest ("sha256:<hex>") with a trusted key, offline.
// No bundle is ReasonUnsigned; otherwise the refusal names the first
// bundle's reason (a digest mismatch before an untrusted signer).
func (t *Trust) Verify(digest string, bundles [][]byte) error {
	hexDigest, ok := strings.CutPrefix(digest, "sha256:")
	want, err := hex.DecodeString(hexDigest)
	if !ok || err != nil || len(want) != sha256.Size {
		return &Error{Reason: ReasonInvalidBundle, Err: fmt.Errorf("digest %q is not sha256:<64 hex>", digest)}
	}
	if len(bundles) == 0 {
		return &Error{Reason: ReasonUnsigned, Err: fmt.Errorf("no Sigstore bundle is attached to %s: only skills signed by a trusted key are accepted", digest)}
	}
	var refusals []*Error
	for _, raw := range bundles {
		err := t.verifyOne(want, raw)
		if err == nil {
			return nil
		}
		refusals = append(refusals, err)
	}
	first := refusals[0]
	for _, r := range refusals {
		if r.Reason == ReasonDigestMismatch {
			first = r
			break
		}
	}
	return first
}

func (t *Trust) verifyOne(want, raw []byte) *Error {
	if len(raw) > MaxBundleBytes {
		return &Error{Reason: ReasonInvalidBundle, Err: fmt.Errorf("bundle of %d bytes, over the limit of %d", len(raw), MaxBundleBytes)}
	}
	var pb protobundle.Bundle
	if err := protojson.Unmarshal(raw, &pb); err != nil {
		return &Error{Reason: ReasonInvalidBundle, Err: err}
	}
	b, err := bundle.NewBundle(&pb)
	if err != nil {
		return &Error{Reason: ReasonInvalidBundle, Err: err}
	}
	ms := pb.GetMessageSignature()
	if ms == nil || pb.GetVerificationMaterial().GetPublicKey() == nil {
		return &Error{Reason: ReasonInvalidBundle, Err: errors.New("want a message signature by a public key")}
	}
	if got := ms.GetMessageDigest().GetDigest(); !bytes.Equal(got, want) {
		return &Error{Reason: ReasonDigestMismatch, Err: fmt.Errorf("the bundle signs sha256:%x, not the artifact's sha256:%x: the artifact changed after signing", got, want)}
	}
	hint := pb.GetVerificationMaterial().GetPublicKey().GetHint()
	if _, ok := t.keys[hint]; !ok {
		return &Error{Reason: ReasonUntrustedSigner, Err: fmt.Errorf("signed by key %s, which is not trusted here", hint)}
	}
	policy := verify.NewPolicy(verify.WithArtifactDigest("sha256", want), verify.WithKey())
	if _, err := t.verifier.Verify(b, policy); err != nil {
		return &Error{Reason: ReasonUntrustedSigner, Err: fmt.Errorf("the signature does not verify with trusted key %s: %w", hint, err)}
	}
	return nil
}
