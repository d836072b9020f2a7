package hardening

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	hostdserver "github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// TestBadInput_PlatformPolicyIsNeverHeldBack: a tenant with rights in its own
// namespace breaks its input on purpose (one case per kind of error a tenant
// can reach), then the platform adds a guard for that namespace. The
// Workspace keeps its last good tenant content but publishes it under the
// platform's new policy at once, and a real hostd, verifying the manager's
// signature for the Workspace, denies what the new guard denies. Where no
// good content can be kept, the platform's policy is published alone.
func TestBadInput_PlatformPolicyIsNeverHeldBack(t *testing.T) {
	t.Parallel()
	byName := map[string]wsCase{}
	for _, c := range wsCases {
		byName[c.name] = c
	}
	for _, name := range []string{
		"duplicate skill name in one root",                       // DuplicateName
		"context over budget",                                    // ContextTooLarge: a 1 KiB budget
		"instructions ConfigMap missing",                         // InstructionsNotFound
		"activate an unknown skill",                              // ActivationFailed
		"cel syntax error",                                       // a trusted tenant's broken Extension
		"root aimed at another tenant",                           // RootNotPermitted
		"skill file path ./x",                                    // InvalidResource
		"service-backed extension whose Service does not answer", // an import that fails
	} {
		tc, ok := byName[name]
		if !ok {
			t.Fatalf("no wsCase %q", name)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			victim := kit.NewNamespace(t, vocab.TrustTrusted)
			ns := kit.NewNamespace(t, vocab.TrustTrusted)
			good, _ := baseline(t, ns)
			tc.bad(t, ns, victim)
			kit.WaitFor(t, ns, "dev", testenv.Condition(vocab.ConditionType(tc.cond), metav1.ConditionFalse, vocab.ConditionReason(tc.reason)))

			addPlatformGuardFor(t, ns)
			got := kit.WaitFor(t, ns, "dev", func(w *v1alpha1.Workspace) error {
				if w.Status.HeldContent == nil || w.Status.Context == nil || w.Status.Context.Hash == good.Status.Context.Hash {
					return fmt.Errorf("no held context with the new policy yet: %+v", w.Status.HeldContent)
				}
				return nil
			})
			if got.Status.HeldContent.Mode != v1alpha1.HeldContentContent || got.Status.HeldContent.From != good.Status.Context.Hash ||
				got.Status.HeldContent.Reason != tc.reason {
				t.Errorf("status.heldContent = %+v, want the content of %s held for %s", got.Status.HeldContent, good.Status.Context.Hash, tc.reason)
			}
			if err := testenv.Condition(vocab.ConditionReady, metav1.ConditionFalse, vocab.ConditionReason(tc.reason))(got); err != nil {
				t.Error(err)
			}
			cm := kit.ConfigMap(t, ns, "dev-context")
			testenv.MustContain(t, "held context", allData(cm), "PROJECT RULES", "NOTES BODY", "CHECKLIST", "guard_note", "platform-current-guard", "PLATFORM-CURRENT-GUIDE")
			if strings.Contains(allData(cm), victimMarker) {
				t.Error("the held context carries another tenant's content")
			}
			url := startHostdOn(t, ns, cm.Data)
			if v := before(t, url, "bash", map[string]any{"command": "terraform destroy"}); v.allowed || !strings.Contains(v.reason, "platform guard: no terraform destroy") {
				t.Errorf("the platform's new guard did not deny through hostd: %+v", v)
			}
			if v := before(t, url, "webfetch", map[string]any{"url": "https://example.com"}); v.allowed {
				t.Error("a tool the platform now denies was allowed")
			}
			if v := before(t, url, "bash", map[string]any{"command": "ls -la"}); !v.allowed {
				t.Errorf("an ordinary command was denied: %+v", v)
			}
		})
	}
}

// addPlatformGuardFor imposes a new platform extension on ns only (so the
// parallel tests' Workspaces do not see it): a before hook, a denied tool
// and a prompt guide.
func addPlatformGuardFor(t *testing.T, ns string) {
	t.Helper()
	e := testenv.Extension(platformNS, "guard-"+ns, nil, v1alpha1.ExtensionHook{
		Name: "no-terraform-destroy", Event: vocab.BeforeToolCall, Match: &v1alpha1.HookMatch{Tools: []v1alpha1.ToolName{"shell"}},
		CEL: &v1alpha1.CELHook{Expression: "!call.arguments.command.startsWith('terraform destroy')", Message: "platform guard: no terraform destroy"},
	})
	e.Spec.Name = "platform-current-guard"
	e.Spec.PromptGuide = "PLATFORM-CURRENT-GUIDE"
	e.Spec.DeniedTools = []v1alpha1.ToolName{"web"}
	e.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	kit.Create(t, e)
	deleteWhenDone(t, e)
}

// hostdFor is a real hostd trusting the test manager's signing keys and
// serving Workspace ns/dev, its log dropped; opts gives its directories
// (and clock).
func hostdFor(ns string, opts hostdserver.Options) *hostdserver.Server {
	opts.ContextKeys, opts.Workspace, opts.Logger = contextAnchor, ns+"/dev", slog.New(slog.DiscardHandler)
	return hostdserver.New(opts)
}

// startHostdOn runs hostdFor on a context ConfigMap's data and returns its
// URL.
func startHostdOn(t *testing.T, ns string, data map[string]string) string {
	t.Helper()
	s := hostdFor(ns, hostdserver.Options{ContextDir: resourcestest.Tree(t, data)})
	if err := s.Reload(context.Background(), true); err != nil {
		t.Fatalf("hostd refused the published context: %v", err)
	}
	return testnet.ServeHandler(t, s.Handler()).URL
}

type verdict struct {
	allowed bool
	reason  string
}

// before asks hostd's /v1/before about one call.
func before(t *testing.T, url, tool string, args map[string]any) verdict {
	t.Helper()
	var out hostdserver.BeforeResponse
	if code := testnet.PostJSON(t, url+"/v1/before", map[string]any{"call": map[string]any{"id": "c1", "name": tool, "arguments": args}}, &out); code != http.StatusOK {
		t.Fatalf("/v1/before: %d", code)
	}
	v := verdict{allowed: out.Allowed}
	if out.Result != nil && len(out.Result.Content) > 0 {
		v.reason = out.Result.Content[0].Text
	}
	return v
}
