package hardening

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/contract"
	hostdserver "github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// epochHostd is a real hostd serving Workspace ns/dev with --policy-dir, on
// files the test writes, with a clock the test moves.
type epochHostd struct {
	s                  *hostdserver.Server
	url                string
	contextDir, polDir string
	offset             atomic.Int64
}

func startEpochHostd(t *testing.T, ns string, contextData, epochData map[string]string) *epochHostd {
	t.Helper()
	h := &epochHostd{contextDir: t.TempDir(), polDir: t.TempDir()}
	h.s = hostdFor(ns, hostdserver.Options{ContextDir: h.contextDir, PolicyDir: h.polDir,
		Now: func() time.Time { return time.Now().Add(time.Duration(h.offset.Load())) }})
	if err := h.write(t, contextData, epochData); err != nil {
		t.Fatalf("hostd refused the context under the epoch: %v", err)
	}
	h.url = testnet.ServeHandler(t, h.s.Handler()).URL
	return h
}

// write replaces the context and epoch files (nil: keep) and reloads.
func (h *epochHostd) write(t *testing.T, contextData, epochData map[string]string) error {
	t.Helper()
	for dir, data := range map[string]map[string]string{h.contextDir: contextData, h.polDir: epochData} {
		resourcestest.WriteTree(t, dir, data)
	}
	return h.s.Reload(context.Background(), true)
}

func (h *epochHostd) ready(t *testing.T) (int, string) {
	t.Helper()
	return testnet.Get(t, h.url+"/readyz")
}

// epochOf waits for ns's policy epoch to satisfy check and returns it.
func epochOf(t *testing.T, ns string, check func(*corev1.ConfigMap) error) *corev1.ConfigMap {
	t.Helper()
	var cm *corev1.ConfigMap
	kit.Eventually(t, func() error {
		got, err := kit.GetConfigMap(ns, contract.EpochConfigMap)
		if err != nil {
			return err
		}
		if got.Labels[contract.EpochLabel] != "true" || got.Data[contract.KeyPolicy] == "" || got.Data[contract.KeySignature] == "" {
			return fmt.Errorf("epoch %s/%s incomplete: %+v", ns, contract.EpochConfigMap, got.ObjectMeta)
		}
		if err := check(got); err != nil {
			return err
		}
		cm = got
		return nil
	})
	return cm
}

func epochDoc(t *testing.T, cm *corev1.ConfigMap) contract.PolicyEpoch {
	t.Helper()
	var ep contract.PolicyEpoch
	if err := json.Unmarshal([]byte(cm.Data[contract.KeyPolicy]), &ep); err != nil {
		t.Fatal(err)
	}
	return ep
}

func platformPolicyOf(t *testing.T, cm *corev1.ConfigMap) string {
	t.Helper()
	return testenv.ManifestOf(t, cm).PlatformPolicy
}

// TestPolicyEpoch_FrozenContextIsRefusedAfterAPlatformChange: a tenant keeps
// a copy of its Workspace's context (signed by the manager, so it verifies)
// and serves it to its agent after the platform changed its policy. The
// manager writes the namespace's policy epoch once for the change (and not
// at rest); a real hostd given the new epoch from the cluster keeps the
// frozen context for the grace only, then denies every call naming the
// stale policy, while the current context serves under the same epoch.
func TestPolicyEpoch_FrozenContextIsRefusedAfterAPlatformChange(t *testing.T) {
	t.Parallel()
	ns, _, cm := publishedNotes(t, vocab.TrustTrusted)
	epochPath := "/api/v1/namespaces/" + ns + "/configmaps/" + contract.EpochConfigMap
	first := epochOf(t, ns, func(e *corev1.ConfigMap) error {
		if e.Annotations[controllers.EpochPolicyAnnotation] != platformPolicyOf(t, cm) {
			return fmt.Errorf("epoch names %s, the context carries %s", e.Annotations[controllers.EpochPolicyAnnotation], platformPolicyOf(t, cm))
		}
		return nil
	})
	if d := epochDoc(t, first); d.Namespace != ns || d.PlatformPolicy != platformPolicyOf(t, cm) || d.Previous != nil {
		t.Errorf("first epoch %+v, want namespace %s naming the context's policy, no previous", d, ns)
	}
	time.Sleep(3 * time.Second) // the reconciles our own writes caused settle
	atRest := writes.Total(epochPath)
	if atRest != 1 {
		t.Errorf("epoch writes for the first Workspace = %d, want 1", atRest)
	}

	frozen := maps.Clone(cm.Data)
	h := startEpochHostd(t, ns, frozen, first.Data)
	if v := before(t, h.url, "bash", map[string]any{"command": "terraform destroy"}); !v.allowed {
		t.Fatalf("before the change, the context serves: %+v", v)
	}

	// The platform changes its policy for this namespace.
	addPlatformGuardFor(t, ns)
	_, current := kit.Published(t, ns, "dev", "platform-current-guard")
	second := epochOf(t, ns, func(e *corev1.ConfigMap) error {
		if e.Annotations[controllers.EpochPolicyAnnotation] != platformPolicyOf(t, current) {
			return fmt.Errorf("epoch names %s, the current context carries %s", e.Annotations[controllers.EpochPolicyAnnotation], platformPolicyOf(t, current))
		}
		return nil
	})
	if platformPolicyOf(t, current) == platformPolicyOf(t, cm) {
		t.Fatal("the platform change did not change the context's platform policy")
	}
	ep := epochDoc(t, second)
	if ep.Previous == nil || ep.Previous.PlatformPolicy != platformPolicyOf(t, cm) || time.Until(ep.Previous.Until) > controllers.DefaultPolicyGrace {
		t.Errorf("second epoch's previous %+v, want the replaced policy until at most %s from now", ep.Previous, controllers.DefaultPolicyGrace)
	}
	time.Sleep(3 * time.Second)
	if n := writes.Total(epochPath) - atRest; n != 1 {
		t.Errorf("epoch writes for one platform change = %d, want 1", n)
	}
	// An unrelated namespace's epoch is not written for it.
	settled := writes.Total(epochPath)
	time.Sleep(2 * time.Second)
	if n := writes.Total(epochPath) - settled; n != 0 {
		t.Errorf("epoch writes at rest = %d, want 0", n)
	}

	// hostd gets the new epoch: within the grace the frozen context still
	// serves (the volumes may update in either order) ...
	if err := h.write(t, nil, second.Data); err != nil {
		t.Fatalf("the frozen context within the grace: %v", err)
	}
	// ... after it, it is not served: every call is denied, naming why.
	h.offset.Store(int64(controllers.DefaultPolicyGrace + time.Minute))
	if err := h.write(t, nil, nil); err == nil || !strings.Contains(err.Error(), "stale platform policy") {
		t.Fatalf("the frozen context after the grace: %v, want refused for its stale platform policy", err)
	}
	for _, cmd := range []string{"terraform destroy", "ls -la"} {
		if v := before(t, h.url, "bash", map[string]any{"command": cmd}); v.allowed || !strings.Contains(v.reason, "stale platform policy") {
			t.Errorf("%q under the frozen context: %+v, want denied naming the stale platform policy", cmd, v)
		}
	}
	if code, body := h.ready(t); code != http.StatusServiceUnavailable || !strings.Contains(body, "StalePolicy") {
		t.Errorf("/readyz = %d %s, want 503 naming the stale policy", code, body)
	}

	// The current context serves under the same epoch, with the new guard.
	if err := h.write(t, current.Data, nil); err != nil {
		t.Fatalf("the current context: %v", err)
	}
	if v := before(t, h.url, "bash", map[string]any{"command": "terraform destroy"}); v.allowed || !strings.Contains(v.reason, "platform guard: no terraform destroy") {
		t.Errorf("the platform's new guard: %+v", v)
	}
	if v := before(t, h.url, "bash", map[string]any{"command": "ls -la"}); !v.allowed {
		t.Errorf("an ordinary command under the current context: %+v", v)
	}
	if code, body := h.ready(t); code != http.StatusOK {
		t.Errorf("/readyz = %d %s with the current context", code, body)
	}
}

// TestPolicyEpoch_TenantCannotRemoveOrRewriteTheEpoch: only the manager and
// the admin groups write the epoch; a tenant with every right in its
// namespace can neither delete it nor strip its label (after which the
// manager could not write the next one).
func TestPolicyEpoch_TenantCannotRemoveOrRewriteTheEpoch(t *testing.T) {
	t.Parallel()
	installPolicy(t, "context_configmap_policy.yaml")
	ns, _, _ := publishedNotes(t, vocab.TrustTrusted)
	epochOf(t, ns, func(*corev1.ConfigMap) error { return nil })
	tenant := namespaceAdmin(t, ns)
	epoch := &corev1.ConfigMap{}
	epoch.Namespace, epoch.Name = ns, contract.EpochConfigMap
	waitEnforced(t, "the policy epoch policy", func() error { return tenant.Delete(context.Background(), epoch, client.DryRunAll) })
	mustBeDenied(t, "deleting the epoch", tenant.Delete(context.Background(), epoch), "policy epoch", ns+"/"+contract.EpochConfigMap)
	got := &corev1.ConfigMap{}
	if err := tenant.Get(context.Background(), client.ObjectKeyFromObject(epoch), got); err != nil {
		t.Fatal(err)
	}
	delete(got.Labels, contract.EpochLabel)
	delete(got.Data, contract.KeySignature)
	mustBeDenied(t, "stripping the epoch's label and signature", tenant.Update(context.Background(), got), "policy epoch")
	if _, err := kit.GetConfigMap(ns, contract.EpochConfigMap); err != nil {
		t.Errorf("the epoch is gone: %v", err)
	}
}

// TestPolicyEpoch_DeletedWorkspacesDenyAllServesAtOnce: a hostd given the
// namespace's epoch serves the deny-all context of a Workspace being
// deleted at once (it carries no platform policy and lets nothing through),
// so the epoch never holds the deletion's denial back behind the context
// it replaces.
func TestPolicyEpoch_DeletedWorkspacesDenyAllServesAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns, ws, cm := publishedNotes(t, vocab.TrustTrusted)
	epoch := epochOf(t, ns, func(*corev1.ConfigMap) error { return nil })
	h := startEpochHostd(t, ns, cm.Data, epoch.Data)
	if v := before(t, h.url, "bash", map[string]any{"command": "ls"}); !v.allowed {
		t.Fatalf("the published context under its epoch: %+v", v)
	}
	ws.Finalizers = append(ws.Finalizers, "admin.example/hold")
	if err := k8sClient.Update(ctx, ws); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		got := ws.DeepCopy()
		if k8sClient.Get(ctx, client.ObjectKeyFromObject(ws), got) == nil {
			got.Finalizers = nil
			_ = k8sClient.Update(ctx, got)
		}
	})
	if err := k8sClient.Delete(ctx, ws); err != nil {
		t.Fatal(err)
	}
	var denyAll *corev1.ConfigMap
	kit.Eventually(t, func() error {
		got, err := kit.GetConfigMap(ns, "dev-context")
		if err != nil {
			return err
		}
		if !strings.Contains(got.Data[contract.KeyManifest], contract.DenyAllExtension) {
			return fmt.Errorf("no deny-all context yet")
		}
		denyAll = got
		return nil
	})
	if err := h.write(t, denyAll.Data, nil); err != nil {
		t.Fatalf("hostd refused the deny-all context under the epoch: %v", err)
	}
	if v := before(t, h.url, "bash", map[string]any{"command": "ls"}); v.allowed {
		t.Errorf("a call under the deny-all context: %+v, want denied", v)
	}
}
