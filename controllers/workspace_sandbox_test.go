package controllers

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// The Workspace's status says which sandbox its agents get: the platform's
// declaration narrowed by the Workspace's own (R-SB-1), the same value the
// published manifest carries; a Workspace that asks for more gets no more.
func TestWorkspace_StatusShowsTheEffectiveSandbox_RSB1(t *testing.T) {
	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	plat := &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: platformOtherNS, Name: "sandbox-" + ns},
		Spec: v1alpha1.ExtensionSpec{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			Sandbox: &v1alpha1.Sandbox{
				Filesystem: &v1alpha1.SandboxFilesystem{Paths: []v1alpha1.SandboxPath{
					{Path: "/", Access: []v1alpha1.SandboxAccess{"read", "execute"}},
					{Path: "/workspace", Access: []v1alpha1.SandboxAccess{"read", "write", "create"}},
				}},
				Network: &v1alpha1.SandboxNetwork{ConnectPorts: []int32{443}},
			}}}
	kit.Create(t, plat)
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), plat) })
	ws := workspaceWithRoots(ns, "dev", platformOtherNS)
	ws.Spec.Sandbox = &v1alpha1.Sandbox{
		Filesystem:        &v1alpha1.SandboxFilesystem{Paths: []v1alpha1.SandboxPath{{Path: "/workspace", Access: []v1alpha1.SandboxAccess{"read", "write", "create", "remove"}}}},
		Network:           &v1alpha1.SandboxNetwork{ConnectPorts: []int32{22, 443}},
		UnsandboxedAgents: v1alpha1.UnsandboxedAllow,
	}
	kit.Create(t, ws)
	want := &v1alpha1.Sandbox{
		Filesystem:        &v1alpha1.SandboxFilesystem{Paths: []v1alpha1.SandboxPath{{Path: "/workspace", Access: []v1alpha1.SandboxAccess{"create", "read", "write"}}}},
		Network:           &v1alpha1.SandboxNetwork{ConnectPorts: []int32{443}},
		UnsandboxedAgents: v1alpha1.UnsandboxedRefuse,
	}
	kit.WaitFor(t, ns, "dev", func(ws *v1alpha1.Workspace) error {
		if !reflect.DeepEqual(ws.Status.Sandbox, want) {
			return fmt.Errorf("status.sandbox %+v, want %+v", ws.Status.Sandbox, want)
		}
		return testenv.Ready(ws)
	})
	_, cm := kit.Published(t, ns, "dev")
	testenv.MustContain(t, contract.KeyManifest, cm.Data[contract.KeyManifest], `"sandbox":`, `"connectPorts":`)
}
