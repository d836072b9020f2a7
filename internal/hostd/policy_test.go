package hostd

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"

	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/contract"
)

const (
	policyA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	policyB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// signedWithPolicy is a context of reg carrying platform policy digest,
// signed by s for the served Workspace.
func signedWithPolicy(t *testing.T, s *contextsig.Signer, reg contract.Registry, digest string) map[string]string {
	t.Helper()
	data := contextData(t, reg)
	hash := rehash(t, data, func(m *contract.Manifest) { m.PlatformPolicy = digest })
	data[contract.KeySignature] = string(s.Sign(hash, servedWS))
	return data
}

// epochData is a policy epoch, signed by s (nil: unsigned) for namespace
// signedFor.
func epochData(t *testing.T, s *contextsig.Signer, ep contract.PolicyEpoch, signedFor string) map[string]string {
	t.Helper()
	raw, err := json.Marshal(ep)
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]string{contract.KeyPolicy: string(raw)}
	if s != nil {
		data[contract.KeySignature] = string(s.SignEpoch(contract.EpochHash(raw), signedFor, contract.EpochConfigMap))
	}
	return data
}

// hostd given the namespace's policy epoch serves a context only while the
// epoch names the platform policy it carries, or names it as the previous
// one within its grace; a forged, unsigned or other namespace's epoch, or
// none, refuses every context.
func TestPolicyEpoch_AcceptsOnlyTheCurrentPolicy(t *testing.T) {
	key := testenv.SigningKey(t)
	manager, intruder := signerOf(t, key), signerOf(t, testenv.SigningKey(t))
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		epoch  map[string]string // nil: no policy directory at all
		served bool
		reason string
	}{
		"current": {epoch: epochData(t, manager, contract.PolicyEpoch{Namespace: "team-a", PlatformPolicy: policyA}, "team-a"), served: true},
		"previous within grace": {epoch: epochData(t, manager, contract.PolicyEpoch{Namespace: "team-a", PlatformPolicy: policyB,
			Previous: &contract.PreviousPolicy{PlatformPolicy: policyA, Until: now.Add(time.Minute)}}, "team-a"), served: true},
		"previous after grace": {epoch: epochData(t, manager, contract.PolicyEpoch{Namespace: "team-a", PlatformPolicy: policyB,
			Previous: &contract.PreviousPolicy{PlatformPolicy: policyA, Until: now.Add(-time.Second)}}, "team-a"), reason: "was accepted until"},
		"other digest":    {epoch: epochData(t, manager, contract.PolicyEpoch{Namespace: "team-a", PlatformPolicy: policyB}, "team-a"), reason: policyB},
		"forged epoch":    {epoch: epochData(t, intruder, contract.PolicyEpoch{Namespace: "team-a", PlatformPolicy: policyA}, "team-a"), reason: contextsig.ReasonBadSignature},
		"unsigned epoch":  {epoch: epochData(t, nil, contract.PolicyEpoch{Namespace: "team-a", PlatformPolicy: policyA}, ""), reason: "unsigned"},
		"other namespace": {epoch: epochData(t, manager, contract.PolicyEpoch{Namespace: "team-b", PlatformPolicy: policyA}, "team-b"), reason: "namespace team-b's"},
		"epoch claiming the namespace, signed for another": {epoch: epochData(t, manager, contract.PolicyEpoch{Namespace: "team-a", PlatformPolicy: policyA}, "team-b"),
			reason: contextsig.ReasonWrongWorkspace},
		"missing dir": {reason: "cannot be read"},
	} {
		t.Run(name, func(t *testing.T) {
			ctxDir, policyDir := t.TempDir(), filepath.Join(t.TempDir(), "policy")
			resourcestest.WriteConfigMapDir(t, ctxDir, signedWithPolicy(t, manager, fixedRegistry(), policyA))
			if tc.epoch != nil {
				policyDir = t.TempDir()
				resourcestest.WriteConfigMapDir(t, policyDir, tc.epoch)
			}
			s := New(Options{ContextDir: ctxDir, PolicyDir: policyDir, ContextKeys: anchorOf(t, key), Workspace: "team-a/ws",
				Now: func() time.Time { return now }, Logger: quietLogger()})
			err := s.Reload(context.Background(), true)
			api, probes := serveOnly(t, s)
			code, ready := quickGet(t, probes.URL+"/readyz")
			var resp BeforeResponse
			callCode := post(t, api.URL+"/v1/before", callBody("1", "review_note", "fine"), &resp)
			if tc.served {
				if err != nil || code != http.StatusOK || !resp.Allowed {
					t.Fatalf("refused: reload %v, /readyz %d %s, call allowed %v", err, code, ready, resp.Allowed)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "stale platform policy") || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("reload error %v, want a stale platform policy naming %q", err, tc.reason)
			}
			if code != http.StatusServiceUnavailable || !strings.Contains(ready, "stale platform policy") {
				t.Errorf("/readyz = %d %s, want 503 naming the stale policy", code, ready)
			}
			if callCode == http.StatusOK && resp.Allowed {
				t.Errorf("a tool call was allowed with no context accepted")
			}
			if m := get(t, probes.URL+"/metrics"); !strings.Contains(m, `loadout_hostd_context_refusals_total{reason="StalePolicy"}`) {
				t.Errorf("refusal not counted as StalePolicy:\n%s", grepLines(m, "refusals"))
			}
		})
	}
}

// serveOnly serves s's API and probes without loading.
func serveOnly(t *testing.T, s *Server) (api, probes *httptest.Server) {
	t.Helper()
	return testnet.ServeHandler(t, s.Handler()), testnet.ServeHandler(t, s.ProbeHandler())
}

// A served context stops being served when the epoch moves on and its grace
// runs out: every tool call, event and Claude Code hook is denied naming the
// stale policy, /readyz answers 503, and the refusal is counted. The new
// context, refused while it was ahead of the epoch, is tried again when the
// epoch changes and then serves.
func TestPolicyEpoch_StaleServedContextIsDeniedUntilTheCurrentOneLoads(t *testing.T) {
	key := testenv.SigningKey(t)
	manager := signerOf(t, key)
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	ctxDir, policyDir := t.TempDir(), t.TempDir()
	resourcestest.WriteConfigMapDir(t, ctxDir, signedWithPolicy(t, manager, fixedRegistry(), policyA))
	resourcestest.WriteConfigMapDir(t, policyDir, epochData(t, manager, contract.PolicyEpoch{Namespace: "team-a", PlatformPolicy: policyA}, "team-a"))
	s := New(Options{ContextDir: ctxDir, PolicyDir: policyDir, ContextKeys: anchorOf(t, key), Workspace: "team-a/ws",
		Now: func() time.Time { return now }, Logger: quietLogger()})
	api, probes := loadAndServe(t, s)
	reload := func() error { return s.Reload(context.Background(), false) }
	allowed := func() bool {
		var resp BeforeResponse
		post(t, api.URL+"/v1/before", callBody("1", "review_note", "fine"), &resp)
		return resp.Allowed
	}

	// The platform changes; the context volume updates first: the new
	// context is ahead of the epoch and refused, the current one serves.
	reg := fixedRegistry()
	reg.Hooks[0].CEL.Expression = "!call.arguments.text.contains('PASSWORD')"
	next := signedWithPolicy(t, manager, reg, policyB)
	resourcestest.WriteConfigMapDir(t, ctxDir, next)
	if err := reload(); err == nil || !strings.Contains(err.Error(), "stale platform policy") {
		t.Fatalf("a context ahead of the epoch: %v, want refused", err)
	}
	if !allowed() {
		t.Fatal("the context the epoch names stopped serving")
	}
	// The epoch follows: the refused context is tried again and serves.
	resourcestest.WriteConfigMapDir(t, policyDir, epochData(t, manager, contract.PolicyEpoch{Namespace: "team-a", PlatformPolicy: policyB,
		Previous: &contract.PreviousPolicy{PlatformPolicy: policyA, Until: now.Add(2 * time.Minute)}}, "team-a"))
	if err := reload(); err != nil {
		t.Fatalf("the new context once the epoch names it: %v", err)
	}
	if servedHash(s) != manifestHashOf(t, next) {
		t.Fatal("the new context is not served")
	}

	// A frozen context (the old one, put back) serves within the grace only.
	resourcestest.WriteConfigMapDir(t, ctxDir, signedWithPolicy(t, manager, fixedRegistry(), policyA))
	if err := reload(); err != nil || !allowed() {
		t.Fatalf("the previous policy within its grace: %v", err)
	}
	now = now.Add(3 * time.Minute)
	if err := reload(); err == nil {
		t.Fatal("the previous policy after its grace still serves")
	}
	var before BeforeResponse
	post(t, api.URL+"/v1/before", callBody("2", "review_note", "fine"), &before)
	if before.Allowed || before.Result == nil || !strings.Contains(before.Result.Content[0].Text, "stale platform policy") {
		t.Errorf("a tool call under a stale policy: %+v, want blocked naming it", before)
	}
	var ev EventResponse
	post(t, api.URL+"/v1/events/UserInput", map[string]any{"prompt": map[string]any{"text": "hi"}}, &ev)
	if ev.Allowed || !strings.Contains(ev.Message, "stale platform policy") {
		t.Errorf("a prompt under a stale policy: %+v, want stopped naming it", ev)
	}
	var run ToolRunResponse
	post(t, api.URL+"/v1/tools/review_note", map[string]any{"call": map[string]any{"id": "3", "arguments": map[string]any{"text": "fine"}}}, &run)
	if run.Executed || len(run.Result.Content) == 0 || !strings.Contains(run.Result.Content[0].Text, "stale platform policy") {
		t.Errorf("a runnable tool call under a stale policy: %+v, want refused naming it", run)
	}
	var registry map[string]any
	if code := post(t, api.URL+"/v1/render", map[string]any{"template": "review", "args": map[string]string{"file": "a", "owner": "b"}}, &registry); code != http.StatusServiceUnavailable {
		t.Errorf("/v1/render under a stale policy = %d, want 503", code)
	}
	var cc map[string]any
	post(t, api.URL+ClaudeCodeHookPath, map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}}, &cc)
	if b, _ := json.Marshal(cc); !strings.Contains(string(b), "deny") || !strings.Contains(string(b), "stale platform policy") {
		t.Errorf("Claude Code's hook under a stale policy: %s, want a deny naming it", b)
	}
	code, ready := quickGet(t, probes.URL+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(ready, ReasonStalePolicy) {
		t.Errorf("/readyz = %d %s, want 503 naming the stale policy", code, ready)
	}
	if m := get(t, probes.URL+"/metrics"); !strings.Contains(m, `loadout_hostd_context_refusals_total{reason="StalePolicy"}`) {
		t.Errorf("refusal not counted:\n%s", grepLines(m, "refusals"))
	}

	// The current context comes back: served again.
	resourcestest.WriteConfigMapDir(t, ctxDir, next)
	if err := reload(); err != nil || !allowed() {
		t.Fatalf("the current context again: %v", err)
	}
	if code, ready := quickGet(t, probes.URL+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz = %d %s after the current context loaded", code, ready)
	}
}

// The deny-all context of a Workspace being deleted carries no platform
// policy and lets nothing through: it serves at once under any epoch, or
// none, replacing the context it follows (the deletion must not wait for a
// grace), while a context without a platform policy that is not deny-all is
// refused.
func TestPolicyEpoch_DenyAllContextServesUnderAnyEpoch(t *testing.T) {
	key := testenv.SigningKey(t)
	manager := signerOf(t, key)
	denyAll := contract.Registry{Extensions: []string{contract.DenyAllExtension}, Deny: []string{"*"},
		Hooks: []contract.Hook{{Extension: contract.DenyAllExtension, Name: "deny-userinput", Event: contract.EventUserInput, TimeoutSeconds: 1,
			CEL: &contract.CELHook{Expression: "false", Message: "Workspace team-a/ws is being deleted"}}}}
	for name, epoch := range map[string]map[string]string{
		"current epoch": epochData(t, manager, contract.PolicyEpoch{Namespace: "team-a", PlatformPolicy: policyA}, "team-a"),
		"no epoch":      nil,
	} {
		t.Run(name, func(t *testing.T) {
			ctxDir, policyDir := t.TempDir(), filepath.Join(t.TempDir(), "missing")
			if epoch != nil {
				policyDir = t.TempDir()
				resourcestest.WriteConfigMapDir(t, policyDir, epoch)
			}
			resourcestest.WriteConfigMapDir(t, ctxDir, signedWithPolicy(t, manager, fixedRegistry(), policyA))
			s := New(Options{ContextDir: ctxDir, PolicyDir: policyDir, ContextKeys: anchorOf(t, key), Workspace: "team-a/ws", Logger: quietLogger()})
			_ = s.Reload(context.Background(), true)
			api, _ := serveOnly(t, s)
			resourcestest.WriteConfigMapDir(t, ctxDir, signedWithPolicy(t, manager, denyAll, ""))
			if err := s.Reload(context.Background(), false); err != nil {
				t.Fatalf("the deny-all context: %v", err)
			}
			var resp BeforeResponse
			post(t, api.URL+"/v1/before", callBody("1", "review_note", "fine"), &resp)
			if resp.Allowed {
				t.Error("a tool call was allowed under the deny-all context")
			}
			// Without the deny-all registry, no platform policy is refused.
			reg := fixedRegistry()
			resourcestest.WriteConfigMapDir(t, ctxDir, signedWithPolicy(t, manager, reg, ""))
			if err := s.Reload(context.Background(), false); err == nil || !strings.Contains(err.Error(), "stale platform policy") {
				t.Errorf("a context without a platform policy: %v, want refused", err)
			}
		})
	}
}
