package main

import (
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// platformGuardManifests is a tenant Workspace and a platform guard in
// loadout-system, with ns (a Namespace manifest, or nothing) for the
// platform namespace.
func platformGuardManifests(t *testing.T, ns string) string {
	t.Helper()
	dir := resourcestest.Tree(t, map[string]string{"all.yaml": ns + `apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: dev, namespace: team-a}
---
apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: guard, namespace: loadout-system}
spec:
  hooks:
    - name: no-rm
      event: BeforeToolCall
      cel: {expression: "!call.arguments.command.contains('rm -rf')", message: "no"}
`})
	return dir
}

// Manifests whose platform namespace has no valid trust label publish no
// platform hooks, as the cluster would: preview says so on stderr, naming the
// namespace, and --strict makes it an error.
func TestPreview_UnlabelledPlatformNamespaceWarnsAndFailsStrict(t *testing.T) {
	dir := platformGuardManifests(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: loadout-system}\n---\n")
	out, stderr, err := run(t, "preview", "-f", dir)
	if err != nil {
		t.Fatalf("preview: %v\n%s", err, stderr)
	}
	mustContain(t, "stderr", stderr, "warning: platform namespace loadout-system has no valid loadout.dev/trust label",
		"no Workspace gets its platform policy")
	if strings.Contains(out, "no-rm") {
		t.Errorf("an unlabelled platform namespace's hook was published:\n%s", out)
	}
	_, stderr, err = run(t, "preview", "-f", dir, "--strict")
	if err == nil || !strings.Contains(err.Error(), "--strict: platform namespace loadout-system has no valid loadout.dev/trust label") {
		t.Fatalf("--strict: err = %v, want the unlabelled platform namespace\n%s", err, stderr)
	}

	// Labelled, nothing to say; the guard is published.
	dir = platformGuardManifests(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: loadout-system, labels: {loadout.dev/trust: trusted}}\n---\n")
	_, stderr, err = run(t, "preview", "-f", dir, "--strict")
	if err != nil || strings.Contains(stderr, "warning: platform namespace") {
		t.Fatalf("labelled: err %v, stderr:\n%s", err, stderr)
	}
	mustContain(t, "manifest", previewData(t, "-f", dir)[contract.KeyManifest], "no-rm", `"imposed": true`)
}

// A platform namespace with no Namespace manifest is taken as installed,
// labelled, with a warning that says so; --strict refuses to assume.
func TestPreview_MissingPlatformNamespaceWarnsAndFailsStrict(t *testing.T) {
	dir := platformGuardManifests(t, "")
	data := previewData(t, "-f", dir)
	mustContain(t, "manifest", data[contract.KeyManifest], "no-rm")
	_, stderr, err := run(t, "preview", "-f", dir)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "stderr", stderr, "warning: platform namespace loadout-system has no Namespace manifest: preview takes it as installed with loadout.dev/trust=trusted")
	if _, _, err := run(t, "preview", "-f", dir, "--strict"); err == nil || !strings.Contains(err.Error(), "loadout-system has no Namespace manifest") {
		t.Fatalf("--strict: err = %v", err)
	}
}

// `loadout preview` shows the effective sandbox in the manifest it prints:
// the platform's declaration, narrowed (never widened) by the Workspace's.
func TestPreview_ShowsTheEffectiveSandbox(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{"all.yaml": `apiVersion: v1
kind: Namespace
metadata: {name: loadout-system, labels: {loadout.dev/trust: trusted}}
---
apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: dev, namespace: team-a}
spec:
  sandbox:
    filesystem:
      paths:
        - {path: /workspace, access: [read, write, create, remove]}
    network: {connectPorts: [22, 443]}
---
apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: guard, namespace: loadout-system}
spec:
  sandbox:
    filesystem:
      paths:
        - {path: /, access: [read, execute]}
        - {path: /workspace, access: [read, write, create]}
    network: {connectPorts: [443]}
`})
	m := strings.Join(strings.Fields(previewData(t, "-f", dir)[contract.KeyManifest]), "")
	mustContain(t, "manifest", m, `"sandbox":{`, `{"path":"/workspace","access":["create","read","write"]}`,
		`"connectPorts":[443]`, `"unsandboxedAgents":"Refuse"`)
	if strings.Contains(m, `"remove"`) || strings.Contains(m, "22,") {
		t.Errorf("the Workspace widened the platform's sandbox:\n%s", m)
	}
}
