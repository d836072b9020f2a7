package sandboxpolicy

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
)

func fs(paths ...contract.SandboxPath) *contract.Sandbox {
	return &contract.Sandbox{Filesystem: &contract.SandboxFilesystem{Paths: paths}}
}

func p(path string, access ...string) contract.SandboxPath {
	return contract.SandboxPath{Path: path, Access: access}
}

// The flat intersection grants, at every path, exactly the rights both
// sides grant there (Landlock's rights are the union over a path's
// ancestors): checked on random rule sets over a small tree.
func TestIntersect_GrantsExactlyWhatBothGrantAtEveryPath(t *testing.T) {
	tree := []string{"/", "/w", "/w/src", "/w/src/a", "/w/doc", "/tmp", "/tmp/x", "/usr", "/usr/bin"}
	rights := []string{"create", "execute", "read", "remove", "write"}
	rnd := rand.New(rand.NewPCG(1, 2))
	random := func() *contract.Sandbox {
		var paths []contract.SandboxPath
		for range rnd.IntN(4) {
			var acc []string
			for _, r := range rights {
				if rnd.IntN(2) == 0 {
					acc = append(acc, r)
				}
			}
			if len(acc) > 0 {
				paths = append(paths, p(tree[rnd.IntN(len(tree))], acc...))
			}
		}
		return fs(paths...)
	}
	for i := range 2000 {
		a, b := random(), random()
		got := Intersect(a, b)
		for _, path := range tree {
			ra, rb := a.Filesystem.Rights(path), b.Filesystem.Rights(path)
			var want []string
			for _, r := range ra {
				if slices.Contains(rb, r) {
					want = append(want, r)
				}
			}
			if g := got.Filesystem.Rights(path); !slices.Equal(g, want) {
				t.Fatalf("case %d at %s: a=%v b=%v: got %v, want %v", i, path, a.Filesystem.Paths, b.Filesystem.Paths, g, want)
			}
		}
	}
}

// A tenant's declaration can only narrow the platform's: granting more
// (remove on the checkout, a path outside, another port, Allow) changes
// nothing, granting less takes effect.
func TestEffective_TenantNarrowsNeverWidens(t *testing.T) {
	platform := &contract.Sandbox{
		Filesystem: &contract.SandboxFilesystem{Paths: []contract.SandboxPath{p("/", "execute", "read"), p("/workspace", "create", "read", "write")}},
		Network:    &contract.SandboxNetwork{ConnectPorts: []int{443}},
	}
	widen := &contract.Sandbox{
		Filesystem:        &contract.SandboxFilesystem{Paths: []contract.SandboxPath{p("/", "create", "execute", "read", "remove", "write")}},
		Network:           &contract.SandboxNetwork{ConnectPorts: []int{22, 443}},
		UnsandboxedAgents: contract.UnsandboxedAllow,
	}
	got := Effective([]*contract.Sandbox{platform}, []*contract.Sandbox{widen, nil})
	want := &contract.Sandbox{
		Filesystem:        &contract.SandboxFilesystem{Paths: []contract.SandboxPath{p("/", "execute", "read"), p("/workspace", "create", "read", "write")}},
		Network:           &contract.SandboxNetwork{ConnectPorts: []int{443}},
		UnsandboxedAgents: contract.UnsandboxedRefuse,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("widening tenant: got %+v, want the platform's %+v", got, want)
	}

	narrow := &contract.Sandbox{Filesystem: &contract.SandboxFilesystem{Paths: []contract.SandboxPath{p("/workspace", "read")}},
		Network: &contract.SandboxNetwork{}}
	got = Effective([]*contract.Sandbox{platform}, []*contract.Sandbox{narrow})
	want = &contract.Sandbox{
		Filesystem:        &contract.SandboxFilesystem{Paths: []contract.SandboxPath{p("/workspace", "read")}},
		Network:           &contract.SandboxNetwork{ConnectPorts: []int{}},
		UnsandboxedAgents: contract.UnsandboxedRefuse,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("narrowing tenant: got %+v, want %+v", got, want)
	}
}

// Two platform declarations intersect; one that allows unsandboxed agents
// does so only if no declaration refuses, and an unset value on a platform
// declaration refuses.
func TestEffective_UnsandboxedAgentsRefuseWins(t *testing.T) {
	allow := &contract.Sandbox{Network: &contract.SandboxNetwork{ConnectPorts: []int{80, 443}}, UnsandboxedAgents: contract.UnsandboxedAllow}
	unset := &contract.Sandbox{Network: &contract.SandboxNetwork{ConnectPorts: []int{443, 8080}}}
	for name, tc := range map[string]struct {
		platform, tenant []*contract.Sandbox
		want             string
	}{
		"platform allows":                 {[]*contract.Sandbox{allow}, nil, contract.UnsandboxedAllow},
		"platform allows, tenant refuses": {[]*contract.Sandbox{allow}, []*contract.Sandbox{{UnsandboxedAgents: contract.UnsandboxedRefuse}}, contract.UnsandboxedRefuse},
		"platform unset means refuse":     {[]*contract.Sandbox{unset}, []*contract.Sandbox{{UnsandboxedAgents: contract.UnsandboxedAllow}}, contract.UnsandboxedRefuse},
		"two platforms, one unset":        {[]*contract.Sandbox{allow, unset}, nil, contract.UnsandboxedRefuse},
		"tenant only, unset means refuse": {nil, []*contract.Sandbox{unset}, contract.UnsandboxedRefuse},
		"tenant only, allows its own":     {nil, []*contract.Sandbox{allow}, contract.UnsandboxedAllow},
	} {
		got := Effective(tc.platform, tc.tenant)
		if got == nil || got.UnsandboxedAgents != tc.want {
			t.Errorf("%s: got %+v, want unsandboxedAgents %s", name, got, tc.want)
		}
	}
	if got := Effective([]*contract.Sandbox{allow, unset}, nil); !slices.Equal(got.Network.ConnectPorts, []int{443}) {
		t.Errorf("ports %v, want [443]: declarations intersect", got.Network.ConnectPorts)
	}
	if Effective(nil, []*contract.Sandbox{nil}) != nil {
		t.Error("nothing declared: want no sandbox")
	}
}

// FromAPI normalises a declaration and drops what cannot be a grant: a
// relative path grants nothing.
func TestFromAPI_NormalisesAndDropsRelativePaths(t *testing.T) {
	got := FromAPI(&v1alpha1.Sandbox{
		Filesystem: &v1alpha1.SandboxFilesystem{Paths: []v1alpha1.SandboxPath{
			{Path: "/w/", Access: []v1alpha1.SandboxAccess{"write", "read"}},
			{Path: "relative", Access: []v1alpha1.SandboxAccess{"remove"}},
			{Path: "/w", Access: []v1alpha1.SandboxAccess{"create"}},
		}},
		Network: &v1alpha1.SandboxNetwork{ConnectPorts: []int32{443, 80, 443}},
	})
	want := &contract.Sandbox{
		Filesystem: &contract.SandboxFilesystem{Paths: []contract.SandboxPath{p("/w", "create", "read", "write")}},
		Network:    &contract.SandboxNetwork{ConnectPorts: []int{80, 443}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if back := FromAPI(ToAPI(want)); !reflect.DeepEqual(back, want) {
		t.Errorf("round trip through the status: got %+v", back)
	}
}

// How the platform starts its pods is the platform's word: a platform
// declaration that says every agent runs under `loadout sandbox` carries
// into the effective sandbox; a tenant's saying so counts for nothing.
func TestEffective_OnlyThePlatformSaysAgentsRunUnderLoadoutSandbox(t *testing.T) {
	net := func(wrapped bool) *contract.Sandbox {
		return &contract.Sandbox{Network: &contract.SandboxNetwork{ConnectPorts: []int{443}}, AgentsUnderLoadoutSandbox: wrapped}
	}
	if got := Effective([]*contract.Sandbox{net(true)}, []*contract.Sandbox{net(false)}); !got.AgentsUnderLoadoutSandbox {
		t.Error("the platform's word was lost")
	}
	if got := Effective([]*contract.Sandbox{net(false)}, []*contract.Sandbox{net(true)}); got.AgentsUnderLoadoutSandbox {
		t.Error("a tenant claimed the platform wraps its agents")
	}
	if got := Effective(nil, []*contract.Sandbox{net(true)}); got.AgentsUnderLoadoutSandbox {
		t.Error("a tenant's own sandbox claimed the platform wraps its agents")
	}
}

// A tenant's hosts narrow the platform's, never widen them: a host the
// platform does not allow (by name or an open port) is dropped, one it does
// stays, normalised to NAME:PORT (R-SB-1).
func TestEffective_TenantHostsNarrowNeverWiden(t *testing.T) {
	platform := FromAPI(&v1alpha1.Sandbox{Network: &v1alpha1.SandboxNetwork{ConnectPorts: []int32{8181}, Hosts: []string{"*.example.com", "GitHub.com"}}})
	if want := []string{"*.example.com:443", "github.com:443"}; !slices.Equal(platform.Network.Hosts, want) {
		t.Fatalf("FromAPI hosts %v, want %v", platform.Network.Hosts, want)
	}
	tenant := FromAPI(&v1alpha1.Sandbox{Network: &v1alpha1.SandboxNetwork{ConnectPorts: []int32{8181, 22}, Hosts: []string{"api.example.com", "evil.org", "github.com:22"}}})
	got := Effective([]*contract.Sandbox{platform}, []*contract.Sandbox{tenant})
	if !slices.Equal(got.Network.ConnectPorts, []int{8181}) || !slices.Equal(got.Network.Hosts, []string{"api.example.com:443"}) {
		t.Errorf("effective network %+v, want port 8181 and api.example.com:443 only", got.Network)
	}
	if back := ToAPI(got); !slices.Equal(back.Network.Hosts, got.Network.Hosts) {
		t.Errorf("ToAPI hosts %v", back.Network.Hosts)
	}
}
