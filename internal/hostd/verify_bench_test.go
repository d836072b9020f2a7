package hostd

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// BenchmarkContextLoad measures one forced load of a context directory
// holding the fixed example's registry (docs/rules.md) (the samples' shape: a skill, a template, a CEL
// before hook, an after hook), side by side without and with signature
// verification against a two-key trust anchor (a rotation's worst case).
// The difference is what verification adds to a load; target ≤ 1 ms.
func BenchmarkContextLoad(b *testing.B) {
	_, k1, _ := ed25519.GenerateKey(rand.Reader)
	_, k2, _ := ed25519.GenerateKey(rand.Reader)
	signer, err := contextsig.NewSigner([]ed25519.PrivateKey{k1, k2})
	if err != nil {
		b.Fatal(err)
	}
	anchor, err := contextsig.ParseTrustAnchor(signer.TrustAnchor())
	if err != nil {
		b.Fatal(err)
	}
	data := contextData(b, fixedRegistry())
	hash := manifestHashOf(b, data)
	data["signature.json"] = string(signer.Sign(hash, contextsig.Subject{Namespace: "team-a", Name: "ws", UID: "uid-1", ConfigMap: "ws-context"}))
	dir := b.TempDir()
	resourcestest.WriteConfigMapDir(b, dir, data)
	for _, tc := range []struct {
		name string
		keys *contextsig.Verifier
	}{{"unsigned", nil}, {"signed", anchor}} {
		b.Run(tc.name, func(b *testing.B) {
			s := New(Options{ContextDir: dir, ContextKeys: tc.keys, Workspace: "team-a/ws", Logger: quietLogger()})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Reload(ctx, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
