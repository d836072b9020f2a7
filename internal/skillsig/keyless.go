package skillsig

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/sigcheck"
)

// Keyless is a verifier of keyless Sigstore bundles (a short-lived
// certificate whose subject and OIDC issuer name the signer) under a
// configured trusted root, offline: the certificate must chain to one of
// the root's certificate authorities and have been valid when a timestamp
// authority of the root, or a transparency log entry the root's log
// signed, says the signature was made (the bundle carries both; nothing is
// fetched). It accepts a bundle whose certificate names one of the
// identities. The full CLI sets it as sigcheck.Keyless; the lean sidecar
// cannot link it (gRPC) and refuses such requirements instead.
func Keyless(identities []contract.SignerIdentity, trustedRoot string) (sigcheck.Verifier, error) {
	if len(identities) == 0 {
		return nil, errors.New("no signer identity")
	}
	tr, err := root.NewTrustedRootFromJSON([]byte(trustedRoot))
	if err != nil {
		return nil, fmt.Errorf("trusted root: %w", err)
	}
	v, err := verify.NewVerifier(tr, verify.WithObserverTimestamps(1))
	if err != nil {
		return nil, fmt.Errorf("trusted root: %w", err)
	}
	k := &keyless{verifier: v}
	for _, id := range identities {
		ci, err := verify.NewShortCertificateIdentity(id.Issuer, "", id.Subject, "")
		if err != nil {
			return nil, fmt.Errorf("identity %s of %s: %w", id.Subject, id.Issuer, err)
		}
		k.identities = append(k.identities, ci)
		k.names = append(k.names, id.Subject+" ("+id.Issuer+")")
	}
	return k, nil
}

type keyless struct {
	verifier   *verify.Verifier
	identities []verify.CertificateIdentity
	names      []string
}

// Verify implements sigcheck.Verifier.
func (k *keyless) Verify(digest string, bundles [][]byte) error {
	hexDigest, ok := strings.CutPrefix(digest, "sha256:")
	want, err := hex.DecodeString(hexDigest)
	if !ok || err != nil || len(want) != 32 {
		return &sigcheck.Error{Reason: sigcheck.ReasonInvalidBundle, Err: fmt.Errorf("digest %q is not sha256:<64 hex>", digest)}
	}
	if len(bundles) == 0 {
		return &sigcheck.Error{Reason: sigcheck.ReasonUnsigned, Err: fmt.Errorf("no Sigstore bundle is attached to %s", digest)}
	}
	var first *sigcheck.Error
	for _, raw := range bundles {
		e := k.verifyOne(want, raw)
		if e == nil {
			return nil
		}
		if first == nil || e.Reason == sigcheck.ReasonDigestMismatch {
			first = e
		}
	}
	return first
}

func (k *keyless) verifyOne(want, raw []byte) *sigcheck.Error {
	if len(raw) > sigcheck.MaxBundleBytes {
		return &sigcheck.Error{Reason: sigcheck.ReasonInvalidBundle, Err: fmt.Errorf("bundle of %d bytes, over the limit of %d", len(raw), sigcheck.MaxBundleBytes)}
	}
	var pb protobundle.Bundle
	if err := protojson.Unmarshal(raw, &pb); err != nil {
		return &sigcheck.Error{Reason: sigcheck.ReasonInvalidBundle, Err: err}
	}
	b, err := bundle.NewBundle(&pb)
	if err != nil {
		return &sigcheck.Error{Reason: sigcheck.ReasonInvalidBundle, Err: err}
	}
	ms := pb.GetMessageSignature()
	if ms == nil || pb.GetVerificationMaterial().GetPublicKey() != nil {
		return &sigcheck.Error{Reason: sigcheck.ReasonInvalidBundle, Err: errors.New("want a message signature by a certificate")}
	}
	if got := ms.GetMessageDigest().GetDigest(); string(got) != string(want) {
		return &sigcheck.Error{Reason: sigcheck.ReasonDigestMismatch, Err: fmt.Errorf("the bundle signs sha256:%x, not the artifact's sha256:%x: the artifact changed after signing", got, want)}
	}
	var errs []error
	for _, id := range k.identities {
		policy := verify.NewPolicy(verify.WithArtifactDigest("sha256", want), verify.WithCertificateIdentity(id))
		_, err := k.verifier.Verify(b, policy)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return &sigcheck.Error{Reason: sigcheck.ReasonUntrustedSigner, Err: fmt.Errorf("not signed by %s under the trusted root: %w", strings.Join(k.names, ", "), errors.Join(errs...))}
}
