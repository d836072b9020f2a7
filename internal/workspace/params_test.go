package workspace

import (
	"context"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// lengthGuard is a platform extension imposed on every namespace: one
// expression, its threshold per namespace from params.
func lengthGuard(from v1alpha1.ParamSource, notFound vocab.ParameterNotFoundAction) v1alpha1.Extension {
	e := testenv.LengthGuard("loadout-system", "length-guard")
	e.Spec.ParamRef.From, e.Spec.ParamRef.ParameterNotFoundAction = from, notFound
	return *e
}

// verdictIn resolves namespace ns's Workspace and asks its published hooks,
// rebuilt as hostd rebuilds them, about one call.
func verdictIn(t *testing.T, objs Objects, ns string) (*exthost.ToolResult, *Resolution) {
	t.Helper()
	ws := workspaceIn(ns)
	res, err := resolve(context.Background(), ws, objs, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Publishable() {
		return nil, res
	}
	host, _ := exthost.NewHostFromRegistry(context.Background(), res.Registry, exthost.WorkspaceInfo{Name: "dev", Namespace: ns}, nil)
	return host.Decide(context.Background(), exthost.ToolCall{ID: "1", Name: "bash", Arguments: map[string]any{"command": "make test"}}).Blocked, res
}

// One expression, two namespaces, two verdicts: each Workspace's context
// carries its own namespace's params. A namespace without the ConfigMap
// gets what parameterNotFoundAction says; a key the ConfigMap lacks rejects
// the extension at reconcile, naming hook, key and ConfigMap.
func TestParams_ParameterisedGuardTwoNamespacesTwoVerdicts_RLC7(t *testing.T) {
	objs := &fakeObjects{
		extensions: []v1alpha1.Extension{lengthGuard(v1alpha1.ParamsFromWorkspace, "")},
		labels:     map[string]map[string]string{"team-a": {vocab.TrustLabel: "trusted"}, "team-b": {vocab.TrustLabel: "trusted"}, "team-c": {}, "team-d": {}},
		configMaps: map[string]map[string]string{
			"team-a/length-guard": {"maxCommand": "4"},
			"team-b/length-guard": {"maxCommand": "100"},
			"team-d/length-guard": {"max": "100"},
		},
	}
	if blocked, _ := verdictIn(t, objs, "team-a"); blocked == nil || blocked.Content[0].Text != "command too long" {
		t.Fatalf("team-a (max 4): %+v", blocked)
	}
	if blocked, res := verdictIn(t, objs, "team-b"); blocked != nil || res.Registry.Hooks[0].Params.From != "team-b/length-guard" {
		t.Fatalf("team-b (max 100): %+v", blocked)
	}
	if blocked, _ := verdictIn(t, objs, "team-c"); blocked == nil || !strings.Contains(blocked.Content[0].Text, "failed") {
		t.Fatalf("team-c (no ConfigMap, Deny): %+v", blocked)
	}
	_, res := verdictIn(t, objs, "team-d")
	if res.Publishable() || len(res.Extensions) != 1 || !strings.Contains(res.Extensions[0].Message, `reads params.maxCommand, but ConfigMap team-d/length-guard has no key "maxCommand" (it has: max)`) {
		t.Fatalf("team-d (no such key): %+v", res.Extensions)
	}

	objs.extensions = []v1alpha1.Extension{lengthGuard(v1alpha1.ParamsFromWorkspace, vocab.ParamsAllow)}
	if blocked, _ := verdictIn(t, objs, "team-c"); blocked != nil {
		t.Fatalf("team-c (no ConfigMap, Allow): %+v", blocked)
	}
}

// From Extension, the values are the platform's: a tenant's ConfigMap of
// the same name in its own namespace changes nothing (docs/security.md).
func TestParams_ExtensionSourceIgnoresTheTenantsConfigMap_RLC7(t *testing.T) {
	objs := &fakeObjects{
		extensions: []v1alpha1.Extension{lengthGuard(v1alpha1.ParamsFromExtension, "")},
		labels:     map[string]map[string]string{"team-a": {vocab.TrustLabel: "trusted"}},
		configMaps: map[string]map[string]string{
			"loadout-system/length-guard": {"maxCommand": "4"},
			"team-a/length-guard":         {"maxCommand": "100000"},
		},
	}
	if blocked, res := verdictIn(t, objs, "team-a"); blocked == nil || res.Registry.Hooks[0].Params.From != "loadout-system/length-guard" {
		t.Fatalf("the tenant's ConfigMap weakened the platform's guard: %+v", blocked)
	}
	objs.configMaps["loadout-system/length-guard"] = map[string]string{"maxCommand": strings.Repeat("9", vocab.MaxParamsBytes)}
	if _, res := verdictIn(t, objs, "team-a"); res.Publishable() || !strings.Contains(res.Extensions[0].Message, "more than the limit") {
		t.Fatalf("oversized params: %+v", res.Extensions)
	}
}
