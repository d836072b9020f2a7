package approvals

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/internal/approval"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// A platform hook that fails at runtime: the call has no path argument,
// so the expression errors (no such key).
const failingHook = trustedNamespaces + `apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: path-guard, namespace: loadout-system}
spec:
  hooks:
    - name: no-etc
      event: BeforeToolCall
      match: {tools: [shell]}
      cel:
        expression: "!call.arguments.path.startsWith('/etc')"
---
apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: dev, namespace: team-a}
spec: {}
`

// TestHookEvents_AFailingHookRaisesOneEventOnTheWorkspace: rule R-HK-8. A
// hook failing at runtime in hostd becomes a Warning Event on the
// Workspace, created as the pod's own identity (RBAC: create events in its
// namespace, nothing else); its further failures within the interval raise
// none, and the identity cannot create an Event in another namespace.
func TestHookEvents_AFailingHookRaisesOneEventOnTheWorkspace(t *testing.T) {
	c := startCluster(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(failingHook), 0o644); err != nil {
		t.Fatal(err)
	}
	data := agenttest.PreviewSamples(t, dir)
	h := agenttest.StartHostd(t, data, append(c.hostdArgs, "--workspace", ns+"/dev")...)
	for i := range 5 {
		got := before(t, h.URL, toolCall{ID: fmt.Sprint(i), Name: "bash", Arguments: map[string]any{"command": "ls"}}, false)
		if got.Allowed {
			t.Fatalf("call %d: a failing before hook allowed the call", i)
		}
	}
	var events []corev1.Event
	testenv.Eventually(t, 30*time.Second, func() error {
		var list corev1.EventList
		if err := c.admin.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		events = nil
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "Workspace" && e.InvolvedObject.Name == "dev" && e.Reason == "HookFailed" {
				events = append(events, e)
			}
		}
		if len(events) == 0 {
			return fmt.Errorf("no HookFailed Event on the Workspace among %d Events", len(list.Items))
		}
		return nil
	})
	// The four further failures are counted, not sent: wait until hostd's
	// metric has seen them, then count the Events again.
	testenv.Eventually(t, 30*time.Second, func() error {
		m := metricsText(t, h.URL)
		if !strings.Contains(m, `loadout_hostd_hook_failure_events_total{outcome="counted"} 4`) ||
			!strings.Contains(m, `loadout_hostd_hook_failure_events_total{outcome="sent"} 1`) {
			return fmt.Errorf("hostd's failure Event metrics: %s", grepLines(m, "hook_failure_events"))
		}
		return nil
	})
	var list corev1.EventList
	if err := c.admin.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Reason == "HookFailed" {
			n++
		}
	}
	e := events[0]
	if n != 1 || e.Type != corev1.EventTypeWarning || e.Count != 1 || e.Source.Component != "loadout-hostd" ||
		!strings.HasPrefix(e.Message, "hook no-etc of extension path-guard failed: ") || !strings.Contains(e.Message, "no such key") {
		t.Fatalf("%d HookFailed Events; the first: %+v", n, e)
	}

	// The identity hostd reports with cannot write Events of another
	// namespace.
	other, err := approval.New(approval.Config{Server: c.hostdArgs[5], CAFile: c.hostdArgs[3], TokenFile: c.hostdArgs[1], Namespace: "loadout-system"})
	if err != nil {
		t.Fatal(err)
	}
	forged := []byte(`{"apiVersion":"v1","kind":"Event","metadata":{"generateName":"x.","namespace":"loadout-system"},"involvedObject":{"kind":"Workspace","name":"x","namespace":"loadout-system"},"reason":"HookFailed","message":"forged","type":"Warning"}`)
	if err := other.CreateEvent(context.Background(), forged); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("an Event in another namespace: %v, want 403", err)
	}
}

func metricsText(t *testing.T, url string) string {
	t.Helper()
	_, body := testnet.Get(t, url+"/metrics")
	return body
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
