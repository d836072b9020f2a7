// Package skillsigtest makes keyless Sigstore signatures for tests: a
// certificate authority, timestamp authority and transparency log of the
// test's own (sigstore-go's virtual Sigstore), their trusted root as JSON,
// and bundles as a release workflow's keyless signing would attach them.
package skillsigtest

import (
	"testing"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loadout-dev/loadout/internal/sigcheck"
)

// A release workflow's identity, as GitHub Actions' OIDC tokens name it.
const (
	ReleaseIdentity = "https://github.com/acme/skills/.github/workflows/release.yml@refs/heads/main"
	ActionsIssuer   = "https://token.actions.githubusercontent.com"
)

// Sigstore is a virtual Sigstore and its trusted root (JSON).
type Sigstore struct {
	vs          *ca.VirtualSigstore
	TrustedRoot string
}

// New makes a Sigstore of the test's own.
func New(t testing.TB) *Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), vs.CTLogs(), vs.TimestampingAuthorities(), vs.RekorLogs())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return &Sigstore{vs: vs, TrustedRoot: string(raw)}
}

// Sign is s's keyless signature of artifact (an OCI manifest's bytes) by
// identity, whose certificate names issuer, as a bundle: the leaf
// certificate, the message signature over the artifact's SHA-256 and the
// timestamp authority's signed timestamp (no transparency log entry).
func (s *Sigstore) Sign(t testing.TB, identity, issuer string, artifact []byte) []byte {
	t.Helper()
	e, err := s.vs.Sign(identity, issuer, artifact)
	if err != nil {
		t.Fatal(err)
	}
	vc, err := e.VerificationContent()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := e.SignatureContent()
	if err != nil {
		t.Fatal(err)
	}
	ms, ok := sc.(*bundle.MessageSignature)
	if !ok {
		t.Fatalf("signature content %T, want a message signature", sc)
	}
	tss, err := e.Timestamps()
	if err != nil || len(tss) == 0 {
		t.Fatalf("timestamps: %v", err)
	}
	pb := &protobundle.Bundle{
		MediaType: sigcheck.BundleMediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
			TimestampVerificationData: &protobundle.TimestampVerificationData{
				Rfc3161Timestamps: []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: tss[0]}},
			},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: ms.Digest()},
			Signature:     ms.Signature(),
		}},
	}
	raw, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
