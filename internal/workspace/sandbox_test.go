package workspace

import (
	"context"
	"reflect"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

// editNeverDelete is the platform's "edit the checkout, never delete it,
// reach only port 443" sandbox.
func editNeverDelete() *v1alpha1.Sandbox {
	return &v1alpha1.Sandbox{
		Filesystem: &v1alpha1.SandboxFilesystem{Paths: []v1alpha1.SandboxPath{
			{Path: "/", Access: []v1alpha1.SandboxAccess{"read", "execute"}},
			{Path: "/workspace", Access: []v1alpha1.SandboxAccess{"read", "write", "create"}},
		}},
		Network: &v1alpha1.SandboxNetwork{ConnectPorts: []int32{443}},
	}
}

func sandboxObjects(tenantSandbox *v1alpha1.Sandbox) *fakeObjects {
	platform := guard("loadout-system", "platform-guard")
	platform.Spec.Sandbox = editNeverDelete()
	tenant := ext("team", "team-tools")
	tenant.Spec.Sandbox = tenantSandbox
	return &fakeObjects{
		extensions: []v1alpha1.Extension{platform, tenant},
		labels: map[string]map[string]string{
			"loadout-system": {vocab.TrustLabel: "trusted"},
			"team":           {vocab.TrustLabel: "trusted"},
		},
	}
}

// The platform's sandbox reaches the published manifest (so the context
// hash and its signature cover it), whatever the tenant declares: a
// Workspace and a tenant extension that grant remove everywhere, another
// port and Allow for unsandboxed agents widen nothing, while the platform
// policy digest names the platform's sandbox alone.
func TestResolve_PlatformSandboxPublishedAndTenantCannotWidenIt(t *testing.T) {
	wide := &v1alpha1.Sandbox{
		Filesystem:        &v1alpha1.SandboxFilesystem{Paths: []v1alpha1.SandboxPath{{Path: "/", Access: []v1alpha1.SandboxAccess{"read", "write", "create", "remove", "execute"}}}},
		Network:           &v1alpha1.SandboxNetwork{ConnectPorts: []int32{22, 443}},
		UnsandboxedAgents: v1alpha1.UnsandboxedAllow,
	}
	ws := workspaceIn("team", v1alpha1.WorkspaceSpec{Sandbox: wide})
	res, err := resolve(context.Background(), ws, sandboxObjects(wide), HostLoader{})
	if err != nil || res.Failure != nil {
		t.Fatalf("Resolve: %v %v", err, res.Failure)
	}
	want := &contract.Sandbox{
		Filesystem: &contract.SandboxFilesystem{Paths: []contract.SandboxPath{
			{Path: "/", Access: []string{"execute", "read"}},
			{Path: "/workspace", Access: []string{"create", "read", "write"}},
		}},
		Network:           &contract.SandboxNetwork{ConnectPorts: []int{443}},
		UnsandboxedAgents: contract.UnsandboxedRefuse,
	}
	if got := res.Result.Manifest.Registry.Sandbox; !reflect.DeepEqual(got, want) {
		t.Errorf("published sandbox %+v, want the platform's %+v", got, want)
	}

	imp, err := PlatformPolicyOf(context.Background(), ws.Namespace, sandboxObjects(nil), policy, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if imp.Digest() != res.Result.Manifest.PlatformPolicy {
		t.Error("the platform policy digest moved with the tenant's sandbox: it must name the platform's alone")
	}
	bare, err := PlatformPolicyOf(context.Background(), ws.Namespace, &fakeObjects{extensions: []v1alpha1.Extension{guard("loadout-system", "platform-guard")},
		labels: sandboxObjects(nil).labels}, policy, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if bare.Digest() == imp.Digest() {
		t.Error("the platform policy digest ignores the platform's sandbox: a changed sandbox would not move the epoch")
	}
}

// A tenant narrows: its read-only checkout and no network hold, in the full
// pass and in a held context alike.
func TestSandbox_TenantNarrowsInFullAndHeldContexts(t *testing.T) {
	narrow := &v1alpha1.Sandbox{
		Filesystem: &v1alpha1.SandboxFilesystem{Paths: []v1alpha1.SandboxPath{{Path: "/workspace", Access: []v1alpha1.SandboxAccess{"read"}}}},
		Network:    &v1alpha1.SandboxNetwork{},
	}
	want := &contract.Sandbox{
		Filesystem:        &contract.SandboxFilesystem{Paths: []contract.SandboxPath{{Path: "/workspace", Access: []string{"read"}}}},
		Network:           &contract.SandboxNetwork{ConnectPorts: []int{}},
		UnsandboxedAgents: contract.UnsandboxedRefuse,
	}
	ws := workspaceIn("team")
	objs := sandboxObjects(narrow)
	if got := mustGather(t, ws, objs).Sandbox; !reflect.DeepEqual(got, want) {
		t.Errorf("full pass: sandbox %+v, want %+v", got, want)
	}
	imp, err := PlatformPolicyOf(context.Background(), ws.Namespace, objs, policy, HostLoader{})
	if err != nil {
		t.Fatal(err)
	}
	tenant, err := TenantPolicy(context.Background(), ws, objs, policy)
	if err != nil {
		t.Fatal(err)
	}
	if got := HeldRegistry(contract.Registry{}, imp, tenant).Sandbox; !reflect.DeepEqual(got, want) {
		t.Errorf("held context: sandbox %+v, want %+v", got, want)
	}
}
