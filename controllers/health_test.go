package controllers

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// The health checks docs/gitops.md ships for Argo CD (Lua) and Flux (CEL)
// are read from the document itself and run against statuses computed by
// the controller's own setters, so the docs cannot drift from the code.

// healthCase is one object and the health every tool must give it.
type healthCase struct {
	name string
	kind string
	obj  runtime.Object
	// want is the Argo CD status: Healthy, Progressing or Degraded.
	want string
}

// fluxOf maps an Argo CD health to the Flux (kstatus) one.
var fluxOf = map[string]string{"Healthy": "current", "Progressing": "inProgress", "Degraded": "failed"}

func healthCases() []healthCase {
	published := func(gen int64) *v1alpha1.Workspace {
		ws := statusWorkspace(gen, 0)
		plan := &workspace.Plan{Input: resources.Input{Roots: make([]resources.Root, 2)}}
		res := &workspace.Resolution{Plan: plan, Result: &resources.Result{Hash: "sha256:aa", Manifest: contract.Manifest{}}}
		setResolvedStatus(ws, res)
		setPublishedStatus(ws, res)
		summarize(ws, nil)
		return ws
	}
	invalid := func() *v1alpha1.Workspace {
		ws := published(1)
		ws.Generation = 2
		setResolvedStatus(ws, &workspace.Resolution{Failure: &workspace.Failure{Phase: workspace.PhaseGather,
			Reason: vocab.ReasonRootNotPermitted, Err: errors.New("root in team-b")}})
		summarize(ws, nil)
		return ws
	}
	rejected := func() *v1alpha1.Workspace {
		ws := statusWorkspace(1, 0)
		plan := &workspace.Plan{Input: resources.Input{Roots: make([]resources.Root, 2)}}
		setResolvedStatus(ws, &workspace.Resolution{Plan: plan,
			Extensions: []exthost.Outcome{{Extension: "guard", Namespace: "ns", State: vocab.ExtensionRejected, Message: "bad CEL"}},
			Failure:    &workspace.Failure{Phase: workspace.PhaseLoad, Reason: vocab.ReasonExtensionRejected, Err: errors.New("guard rejected")}})
		summarize(ws, nil)
		return ws
	}
	transientFirst := statusWorkspace(1, 0)
	summarize(transientFirst, errors.New("connection refused"))
	transientLater := published(3)
	summarize(transientLater, errors.New("apply: timeout"))
	specChanged := published(1)
	specChanged.Generation = 2

	skill := func(gen, observed int64, errs ...error) *v1alpha1.Skill {
		s := &v1alpha1.Skill{ObjectMeta: metav1.ObjectMeta{Generation: observed}}
		if observed > 0 {
			setValidStatus(s, "Skill", checked{errs: errs})
		}
		s.Generation = gen
		return s
	}
	template := &v1alpha1.Template{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	setValidStatus(template, "Template", checked{})
	extension := &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	setValidStatus(extension, "Extension", checked{errs: []error{errors.New("hook: CEL does not compile")}})

	return []healthCase{
		{"new Workspace, no status yet", "Workspace", statusWorkspace(1, 0), "Progressing"},
		{"first pass failed transiently", "Workspace", transientFirst, "Progressing"},
		{"published", "Workspace", published(1), "Healthy"},
		{"spec changed, not yet processed", "Workspace", specChanged, "Progressing"},
		{"transient failure after a good pass", "Workspace", transientLater, "Progressing"},
		{"invalid input holds the last good context", "Workspace", invalid(), "Degraded"},
		{"rejected extension holds", "Workspace", rejected(), "Degraded"},
		{"new Skill", "Skill", skill(1, 0), "Progressing"},
		{"valid Skill", "Skill", skill(2, 2), "Healthy"},
		{"valid Skill, newer generation pending", "Skill", skill(3, 2), "Progressing"},
		{"invalid Skill", "Skill", skill(1, 1, errors.New("duplicate file")), "Degraded"},
		{"valid Template", "Template", template, "Healthy"},
		{"invalid Extension", "Extension", extension, "Degraded"},
	}
}

// docBlock returns the fenced yaml block of docs/gitops.md that contains
// marker, unindented.
func docBlock(t *testing.T, marker string) []byte {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "gitops.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(string(doc), "```yaml\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		if !strings.Contains(block, marker) {
			continue
		}
		lines := strings.Split(block, "\n")
		indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
		for i, l := range lines {
			if len(l) >= indent {
				lines[i] = l[indent:]
			}
		}
		return []byte(strings.Join(lines, "\n"))
	}
	t.Fatalf("docs/gitops.md has no yaml block with %q", marker)
	return nil
}

func objectMap(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestHealth_ArgoCDLuaFromTheDocsForAllFourKinds(t *testing.T) {
	scripts := map[string]string{}
	if err := yaml.Unmarshal(docBlock(t, "resource.customizations.health.loadout.dev_Workspace"), &scripts); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"Workspace", "Skill", "Template", "Extension"} {
		if scripts["resource.customizations.health.loadout.dev_"+kind] == "" {
			t.Errorf("docs/gitops.md has no Argo CD health check for %s", kind)
		}
	}
	for _, tc := range healthCases() {
		t.Run(tc.name, func(t *testing.T) {
			status, message := runLua(t, scripts["resource.customizations.health.loadout.dev_"+tc.kind], objectMap(t, tc.obj))
			if status != tc.want {
				t.Errorf("health %s (%s), want %s", status, message, tc.want)
			}
		})
	}
}

// runLua runs an Argo CD health script with obj as the global `obj` and
// returns hs.status and hs.message.
func runLua(t *testing.T, script string, obj map[string]any) (string, string) {
	t.Helper()
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(script); err != nil {
		t.Fatalf("lua: %v", err)
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the script returned %v, not a table", L.Get(-1))
	}
	return hs.RawGetString("status").String(), hs.RawGetString("message").String()
}

// toLua converts a JSON value into Lua values, as Argo CD does.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range v {
			t.Append(toLua(L, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	}
	return lua.LString("")
}

func TestHealth_FluxCELFromTheDocsForAllFourKinds(t *testing.T) {
	var spec struct {
		HealthCheckExprs []struct {
			APIVersion, Kind            string
			InProgress, Failed, Current string
		} `json:"healthCheckExprs"`
	}
	if err := yaml.Unmarshal(docBlock(t, "healthCheckExprs:"), &spec); err != nil {
		t.Fatal(err)
	}
	env, err := cel.NewEnv(cel.OptionalTypes(),
		cel.Variable("apiVersion", cel.StringType), cel.Variable("kind", cel.StringType),
		cel.Variable("metadata", cel.DynType), cel.Variable("spec", cel.DynType), cel.Variable("status", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	exprs := map[string][3]string{}
	for _, h := range spec.HealthCheckExprs {
		if h.APIVersion != v1alpha1.GroupVersion.String() {
			t.Errorf("%s: apiVersion %s", h.Kind, h.APIVersion)
		}
		exprs[h.Kind] = [3]string{h.InProgress, h.Failed, h.Current}
	}
	for _, tc := range healthCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := exprs[tc.kind]
			if !ok {
				t.Fatalf("docs/gitops.md has no Flux health check for %s", tc.kind)
			}
			obj := objectMap(t, tc.obj)
			if _, ok := obj["status"]; !ok {
				// A new object has no status: Flux waits on an expression
				// that reads a missing variable, as on one in progress.
				obj["status"] = map[string]any{}
			}
			got := "inProgress" // Flux's answer when no expression matches
			for i, name := range []string{"inProgress", "failed", "current"} {
				if e[i] == "" {
					continue
				}
				if evalCEL(t, env, e[i], obj) {
					got = name
					break
				}
			}
			if got != fluxOf[tc.want] {
				t.Errorf("Flux health %s, want %s", got, fluxOf[tc.want])
			}
		})
	}
}

func evalCEL(t *testing.T, env *cel.Env, expr string, obj map[string]any) bool {
	t.Helper()
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("%s: %v", expr, iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := prg.Eval(obj)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		t.Fatalf("%s: not a bool: %v", expr, out)
	}
	return b
}
