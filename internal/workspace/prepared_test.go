package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// reloading is platform with none of its extensions prepared: a Workspace's
// pass then imports and builds the imposed extensions again, as every pass
// did before they came prepared from the platform's policy. It is the old
// path, kept for the tests and benchmarks that compare against it.
func reloading(platform *Platform) *Platform {
	p := *platform
	p.Extensions = slices.Clone(platform.Extensions)
	for i := range p.Extensions {
		p.Extensions[i].Prepared = nil
	}
	return &p
}

// manifestServer serves service-backed extension manifests and counts the
// fetches per extension: a fetch is an import.
type manifestServer struct {
	mu        sync.Mutex
	manifests map[string]string // service name → manifest JSON
	fetches   map[string]int
}

func (s *manifestServer) loader() HostLoader {
	return HostLoader{
		Resolve: func(ns string, ref v1alpha1.ServiceReference) (string, error) {
			return "https://" + ref.Name + "." + ns + ".svc/manifest", nil
		},
		Outbound: outbound.DoerFunc(func(_ context.Context, req outbound.Request) (*outbound.Response, error) {
			name, _, _ := strings.Cut(strings.TrimPrefix(req.Target.URL, "https://"), ".")
			s.mu.Lock()
			defer s.mu.Unlock()
			s.fetches[name]++
			body, ok := s.manifests[name]
			if !ok {
				return &outbound.Response{StatusCode: http.StatusNotFound}, nil
			}
			return &outbound.Response{StatusCode: http.StatusOK, Body: []byte(body)}, nil
		}),
	}
}

func serviceBacked(ns, name string) v1alpha1.Extension {
	e := ext(ns, name)
	e.Spec.Source = &v1alpha1.ExtensionSource{Service: v1alpha1.ServiceReference{Name: name}}
	return e
}

// Each imposed extension is imported once per namespace policy
// (PlatformPolicyOf) and never again in a Workspace's pass: the pass
// commits what the policy prepared and imports only what its roots bring.
// The imports are counted as manifest fetches of service-backed extensions.
func TestResolve_ImposedExtensionsImportOncePerNamespacePolicy(t *testing.T) {
	const hook = `{"hooks":[{"name":"no-secret","event":"BeforeToolCall","cel":{"expression":"true"}}]}`
	srv := &manifestServer{fetches: map[string]int{}, manifests: map[string]string{
		"audit":  hook,
		"guard":  `{"tools":[{"name":"guard_note","description":"Notes."}]}`,
		"helper": `{"tools":[{"name":"helper_note","description":"Helps."}]}`,
	}}
	objs := &fakeObjects{
		extensions: []v1alpha1.Extension{serviceBacked("loadout-system", "audit"), serviceBacked("loadout-system", "guard"),
			serviceBacked("team", "helper")},
		labels: map[string]map[string]string{"team": {vocab.TrustLabel: "trusted"}},
	}
	ctx := context.Background()
	loader := srv.loader()
	platform, err := PlatformPolicyOf(ctx, "team", objs, policy, loader)
	if err != nil {
		t.Fatal(err)
	}
	if platform.Broken != "" || !slices.Equal(platform.IDs, []string{"audit", "guard"}) {
		t.Fatalf("platform policy: broken %q, ids %v", platform.Broken, platform.IDs)
	}
	const workspaces = 3
	for i := range workspaces {
		ws := workspaceIn("team")
		ws.Name = fmt.Sprintf("dev-%d", i)
		res, err := Resolve(ctx, ws, objs, policy, platform, loader)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range res.Extensions {
			if o.State != vocab.ExtensionLoaded {
				t.Fatalf("%s: extension %s/%s %s: %s", ws.Name, o.Namespace, o.Extension, o.State, o.Message)
			}
		}
		if len(res.Extensions) != 3 {
			t.Fatalf("%s: outcomes %+v, want audit, guard and helper", ws.Name, res.Extensions)
		}
	}
	want := map[string]int{"audit": 1, "guard": 1, "helper": workspaces}
	if !reflect.DeepEqual(srv.fetches, want) {
		t.Errorf("imports (manifest fetches) per extension %v, want %v: an imposed extension once per namespace policy, a tenant's once per pass", srv.fetches, want)
	}
}

// extWith is an extension of ns registering tools, imposed unless offered.
func extWith(ns, name string, offered bool, tools ...string) v1alpha1.Extension {
	e := ext(ns, name)
	for _, t := range tools {
		e.Spec.Tools = append(e.Spec.Tools, v1alpha1.ExtensionTool{Name: v1alpha1.ToolName(t), Description: "A tool."})
	}
	if offered {
		e.Spec.Optional = true
		return e
	}
	e.Spec.Hooks = []v1alpha1.ExtensionHook{{Name: "check", Event: vocab.BeforeToolCall, CEL: &v1alpha1.CELHook{Expression: "true"}}}
	return e
}

// Committing the imposed extensions the platform's policy prepared gives,
// bit for bit, what loading every extension in the Workspace's pass gave:
// the same outcomes in the same order, the same registry, the same
// published bytes, also where the Workspace's load order puts what its
// roots bring before an imposed extension or its built-in tools take an
// imposed tool's name (rule R-EXT-2: the first to commit an id or a tool
// name keeps it).
func TestResolve_PreparedImposedExtensionsCommitAsInOneLoadR_EXT_2(t *testing.T) {
	twoPlatforms := Policy{PlatformNamespaces: []string{"p0", "p1"}, DefaultTrust: vocab.TrustRestricted}
	trusted := map[string]string{vocab.TrustLabel: "trusted"}
	for _, tc := range []struct {
		name string
		pol  Policy
		objs *fakeObjects
		spec v1alpha1.WorkspaceSpec
		// want is the state of each extension in load order, namespace/name=state[/reason].
		want []string
	}{
		{name: "an offered extension sorting before an imposed one takes its tool",
			objs: &fakeObjects{extensions: []v1alpha1.Extension{extWith("loadout-system", "zzz-guard", false, "note"),
				extWith("loadout-system", "aaa-tools", true, "note")}},
			want: []string{"loadout-system/aaa-tools=Loaded", "loadout-system/zzz-guard=Rejected/ToolCollision"}},
		{name: "an offered extension of an earlier platform namespace takes an imposed one's id", pol: twoPlatforms,
			objs: &fakeObjects{extensions: []v1alpha1.Extension{extWith("p1", "shared", false), extWith("p0", "shared", true, "p0_note"),
				extWith("p1", "audit", false, "audit_note")},
				labels: map[string]map[string]string{"p0": trusted, "p1": trusted}},
			want: []string{"p0/shared=Loaded", "p1/audit=Loaded", "p1/shared=Rejected/AlreadyLoaded"}},
		{name: "a built-in tool of the Workspace takes an imposed tool's name",
			objs: &fakeObjects{extensions: []v1alpha1.Extension{extWith("loadout-system", "guard", false, "bash", "guard_note"),
				extWith("loadout-system", "later", false, "bash")}},
			spec: v1alpha1.WorkspaceSpec{Tools: &v1alpha1.WorkspaceTools{Builtin: []v1alpha1.ToolName{"bash"}}},
			want: []string{"loadout-system/guard=Rejected/ToolCollision", "loadout-system/later=Rejected/ToolCollision"}},
		{name: "the Workspace denies an imposed tool",
			objs: &fakeObjects{extensions: []v1alpha1.Extension{extWith("loadout-system", "guard", false, "note", "other")}},
			spec: v1alpha1.WorkspaceSpec{Tools: &v1alpha1.WorkspaceTools{Deny: []v1alpha1.ToolName{"note"}}},
			want: []string{"loadout-system/guard=Loaded"}},
		{name: "a tenant extension takes nothing of an imposed one",
			objs: &fakeObjects{extensions: []v1alpha1.Extension{extWith("loadout-system", "zzz-guard", false, "note"),
				extWith("team", "aaa", false, "note"), extWith("team", "zzz-guard", false, "team_note"), extWith("team", "bbb", false, "bbb_note")},
				labels: map[string]map[string]string{"team": trusted}},
			want: []string{"loadout-system/zzz-guard=Loaded", "team/aaa=Rejected/ToolCollision", "team/bbb=Loaded",
				"team/zzz-guard=Rejected/AlreadyLoaded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol := policy
			if tc.pol.PlatformNamespaces != nil {
				pol = tc.pol
			}
			ctx := context.Background()
			ws := workspaceIn("team", tc.spec)
			platform, err := PlatformPolicyOf(ctx, ws.Namespace, tc.objs, pol, HostLoader{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range platform.Extensions {
				if c.Prepared == nil {
					t.Fatalf("imposed extension %s/%s comes unprepared from the platform's policy", c.Extension.Namespace, c.Extension.Name)
				}
			}
			committed, err := Resolve(ctx, ws, tc.objs, pol, platform, HostLoader{})
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := Resolve(ctx, ws, tc.objs, pol, reloading(platform), HostLoader{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range committed.Extensions {
				s := o.Namespace + "/" + o.Extension + "=" + string(o.State)
				if o.State == vocab.ExtensionRejected {
					s += "/" + o.Reason
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("outcomes %v, want %v", got, tc.want)
			}
			sameResolution(t, committed, loaded)
		})
	}
}

// sameResolution fails t unless a and b are the same to every byte that is
// published or reported.
func sameResolution(t *testing.T, a, b *Resolution) {
	t.Helper()
	if !reflect.DeepEqual(a.Extensions, b.Extensions) {
		t.Errorf("outcomes differ:\n committed %+v\n loaded    %+v", a.Extensions, b.Extensions)
	}
	ra, err := json.Marshal(a.Registry)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := json.Marshal(b.Registry)
	if err != nil {
		t.Fatal(err)
	}
	if string(ra) != string(rb) {
		t.Errorf("registries differ:\n committed %s\n loaded    %s", ra, rb)
	}
	if (a.Failure == nil) != (b.Failure == nil) || a.Failure != nil && a.Failure.Error() != b.Failure.Error() {
		t.Errorf("failures differ: %v against %v", a.Failure, b.Failure)
	}
	if a.RetrySoon != b.RetrySoon {
		t.Errorf("RetrySoon %v against %v", a.RetrySoon, b.RetrySoon)
	}
	if (a.Result == nil) != (b.Result == nil) {
		t.Fatalf("result %v against %v", a.Result != nil, b.Result != nil)
	}
	if a.Result != nil && (!reflect.DeepEqual(a.Result.Data, b.Result.Data) || a.Result.Hash != b.Result.Hash) {
		t.Errorf("published data differs: hash %s against %s", a.Result.Hash, b.Result.Hash)
	}
}

// A prepared extension is shared by every Workspace of the namespace: a
// pass that commits it must leave it as it was, so the next pass commits
// the same thing (exthost.Prepared is immutable).
func TestResolve_PassesShareThePlatformsPreparedExtensions(t *testing.T) {
	objs := &fakeObjects{extensions: []v1alpha1.Extension{extWith("loadout-system", "guard", false, "note")}}
	ctx := context.Background()
	platform, err := PlatformPolicyOf(ctx, "team", objs, policy, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	before := *platform.Extensions[0].Prepared
	first, err := Resolve(ctx, workspaceIn("team"), objs, policy, platform, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	// A built-in of the same name rejects the imposed extension in this
	// Workspace only.
	clash := workspaceIn("team", v1alpha1.WorkspaceSpec{Tools: &v1alpha1.WorkspaceTools{Builtin: []v1alpha1.ToolName{"note"}}})
	if res, err := Resolve(ctx, clash, objs, policy, platform, HostLoader{}); err != nil || res.Extensions[0].Reason != exthost.ReasonToolCollision {
		t.Fatalf("clashing Workspace: %v, %+v", err, res)
	}
	again, err := Resolve(ctx, workspaceIn("team"), objs, policy, platform, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, *platform.Extensions[0].Prepared) {
		t.Error("a pass changed the platform's prepared extension")
	}
	sameResolution(t, first, again)
}
