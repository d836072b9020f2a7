package hostd

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testenv"

	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

func signerOf(t *testing.T, keys ...ed25519.PrivateKey) *contextsig.Signer {
	t.Helper()
	s, err := contextsig.NewSigner(keys)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func anchorOf(t *testing.T, keys ...ed25519.PrivateKey) *contextsig.Verifier {
	t.Helper()
	v, err := contextsig.ParseTrustAnchor(signerOf(t, keys...).TrustAnchor())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// signed is contextData(reg) signed by s for Workspace ws (as
// contextData's manifest names it: team-a/ws).
func signed(t *testing.T, s *contextsig.Signer, reg contract.Registry, subject contextsig.Subject) map[string]string {
	t.Helper()
	data := contextData(t, reg)
	hash := manifestHashOf(t, data)
	data[contract.KeySignature] = string(s.Sign(hash, subject))
	return data
}

func manifestHashOf(t testing.TB, data map[string]string) string {
	t.Helper()
	i := strings.Index(data[contract.KeyManifest], `"hash": "`)
	if i < 0 {
		t.Fatal("manifest without hash")
	}
	rest := data[contract.KeyManifest][i+len(`"hash": "`):]
	return rest[:strings.IndexByte(rest, '"')]
}

var servedWS = contextsig.Subject{Namespace: "team-a", Name: "ws", UID: "uid-1", ConfigMap: "ws-context"}

// hostd loads only what the manager signed for the Workspace it serves: a
// forged (unsigned) context, one signed by another key, one signed for
// another Workspace and one edited after signing are all refused, the last
// good context keeps serving its policy, and /readyz and the metrics say why.
func TestVerify_ForgedUnsignedOrCrossWorkspaceContextsAreRefused(t *testing.T) {
	key := testenv.SigningKey(t)
	manager := signerOf(t, key)
	dir := t.TempDir()
	resourcestest.WriteConfigMapDir(t, dir, signed(t, manager, fixedRegistry(), servedWS))
	s := New(Options{ContextDir: dir, ContextKeys: anchorOf(t, key), Workspace: "team-a/ws",
		Logger: quietLogger()})
	if err := s.Reload(context.Background(), true); err != nil {
		t.Fatalf("the manager's signed context: %v", err)
	}
	ts := testnet.ServeHandler(t, s.Handler())
	good := servedHash(s)

	stripped := fixedRegistry()
	stripped.Hooks, stripped.Deny = nil, nil // the tenant's forgery: no policy
	for _, tc := range []struct {
		name, reason string
		data         map[string]string
	}{
		{"unsigned forgery", contextsig.ReasonUnsigned, contextData(t, stripped)},
		{"signed by a key outside the anchor", contextsig.ReasonBadSignature, signed(t, signerOf(t, testenv.SigningKey(t)), stripped, servedWS)},
		{"another Workspace's context", contextsig.ReasonWrongWorkspace, signed(t, manager, stripped, contextsig.Subject{Namespace: "team-b", Name: "ws", UID: "uid-2"})},
		{"an old context of this Workspace copied under another ConfigMap name", contextsig.ReasonWrongConfigMap,
			signed(t, manager, stripped, contextsig.Subject{Namespace: "team-a", Name: "ws", UID: "uid-1", ConfigMap: "old-copy"})},
		{"policy stripped after signing", contextsig.ReasonHashMismatch, func() map[string]string {
			data := contextData(t, stripped)
			data[contract.KeySignature] = signed(t, manager, fixedRegistry(), servedWS)[contract.KeySignature]
			return data
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resourcestest.WriteConfigMapDir(t, dir, tc.data)
			mustRefuseReload(t, s, ts, good)
			if code, ready := testnet.Get(t, ts.URL+"/readyz"); code != http.StatusServiceUnavailable ||
				!strings.Contains(ready, "the newest context was refused") || !strings.Contains(ready, good) {
				t.Fatalf("readyz = %d %s, want 503 saying the newest context was refused, and the last good hash", code, ready)
			}
			if m := get(t, ts.URL+"/metrics"); !strings.Contains(m, `loadout_hostd_context_refusals_total{reason="`+tc.reason+`"} 1`) {
				t.Fatalf("refusal not counted as %s:\n%s", tc.reason, grepLines(m, "refusals"))
			}
		})
	}
	// The manager's next context loads, and /readyz is green again.
	resourcestest.WriteConfigMapDir(t, dir, signed(t, manager, fixedRegistry(), servedWS))
	if err := s.Reload(context.Background(), false); err != nil {
		t.Fatalf("the manager's signed context after the refusals: %v", err)
	}
	if code, ready := testnet.Get(t, ts.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("readyz after a good context = %d %s, want 200", code, ready)
	}
	// A pod admitted for team-a/ws never serves team-b/ws, even one the
	// manager signed, whatever ConfigMap it mounts.
	other := New(Options{ContextDir: dir, ContextKeys: anchorOf(t, key), Workspace: "team-b/ws",
		Logger: quietLogger()})
	resourcestest.WriteConfigMapDir(t, dir, signed(t, manager, fixedRegistry(), servedWS))
	if err := other.Reload(context.Background(), true); err == nil || !strings.Contains(err.Error(), "team-b/ws") {
		t.Fatalf("a host for team-b/ws loaded team-a/ws's context: %v", err)
	}
}

// A rotation publishes the new key before the old one leaves: pods admitted
// with either anchor keep loading every context the manager signs while both
// keys are in its set, so no pod is cut off at any step.
func TestVerify_KeyRotationCausesNoOutage(t *testing.T) {
	oldKey, newKey := testenv.SigningKey(t), testenv.SigningKey(t)
	dir := t.TempDir()
	hosts := map[string]*Server{}
	for name, anchor := range map[string]*contextsig.Verifier{
		"admitted before the rotation": anchorOf(t, oldKey),
		"admitted during the rotation": anchorOf(t, oldKey, newKey),
	} {
		hosts[name] = New(Options{ContextDir: dir, ContextKeys: anchor, Workspace: "team-a/ws", Logger: quietLogger()})
	}
	steps := []struct {
		name   string
		signer *contextsig.Signer
		reg    func() contract.Registry
	}{
		{"old key only", signerOf(t, oldKey), fixedRegistry},
		{"old and new keys", signerOf(t, oldKey, newKey), func() contract.Registry {
			r := fixedRegistry()
			r.Deny = append(r.Deny, "curl") // a policy update during the rotation
			return r
		}},
	}
	for _, step := range steps {
		resourcestest.WriteConfigMapDir(t, dir, signed(t, step.signer, step.reg(), servedWS))
		for name, h := range hosts {
			if err := h.Reload(context.Background(), true); err != nil {
				t.Errorf("%s, contexts signed with %s: %v", name, step.name, err)
			}
		}
	}
	// After the pods rolled, the new-only anchor takes the new-only signer.
	newOnly := New(Options{ContextDir: dir, ContextKeys: anchorOf(t, newKey), Workspace: "team-a/ws", Logger: quietLogger()})
	resourcestest.WriteConfigMapDir(t, dir, signed(t, signerOf(t, newKey), fixedRegistry(), servedWS))
	if err := newOnly.Reload(context.Background(), true); err != nil {
		t.Errorf("after the rotation: %v", err)
	}
}

// A host given trust keys but no Workspace would load a context the manager
// signed for any Workspace and any ConfigMap: it loads none, saying why.
func TestVerify_TrustKeysWithoutAWorkspaceLoadNothing(t *testing.T) {
	key := testenv.SigningKey(t)
	dir := t.TempDir()
	resourcestest.WriteConfigMapDir(t, dir, signed(t, signerOf(t, key), fixedRegistry(), servedWS))
	s := New(Options{ContextDir: dir, ContextKeys: anchorOf(t, key), Logger: quietLogger()})
	err := s.Reload(context.Background(), true)
	if err == nil || !strings.Contains(err.Error(), "no Workspace") {
		t.Fatalf("a host with keys and no Workspace: %v, want the context refused naming the missing Workspace", err)
	}
	if s.current.Load() != nil {
		t.Fatal("a host with keys and no Workspace serves a context")
	}
}
