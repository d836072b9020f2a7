package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

func TestPreview_SamplesMatchGolden(t *testing.T) { // fixed example, R-CAT-6
	out, _, err := run(t, "preview", "-f", samplesDir)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "samples.configmap.yaml", out)
	outJSON, _, err := run(t, "preview", "-f", samplesDir, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "samples.configmap.json", outJSON)
}

func TestPreview_SamplesTwiceIdenticalProjectWinsNoInactiveBody(t *testing.T) { // fixed example, R-CAT-1, R-CAT-4, R-CAT-6, R-CTX-2
	first, _, err := run(t, "preview", "-f", samplesDir)
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := run(t, "preview", "-f", samplesDir)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatal("two previews of the same manifests differ")
	}
	data := previewData(t, "-f", samplesDir)
	var m contract.Manifest
	if err := json.Unmarshal([]byte(data[contract.KeyManifest]), &m); err != nil {
		t.Fatal(err)
	}
	if m.Catalog[0].Origin != "project/team-a/review" {
		t.Fatalf("skill review won from %s, want the project", m.Catalog[0].Origin)
	}
	if len(m.Shadowed) != 1 || m.Shadowed[0].Origin != "platform/loadout-system/review" || m.Shadowed[0].ShadowedBy != "project/team-a/review" {
		t.Fatalf("shadowed = %+v", m.Shadowed)
	}
	// The platform body is inactive (it lost); it must be nowhere.
	mustNotContain(t, "preview output", first, "PLATFORM-REVIEW-BODY")
	mustNotContain(t, "manifest.json", data[contract.KeyManifest], "PROJECT-REVIEW-BODY")
	mustContain(t, "system-prompt.md", data[contract.KeySystemPrompt], "PROJECT-REVIEW-BODY", "No buffer outlives its owner.", "review_note")
	if len(m.Tools) != 1 || m.Tools[0].Name != "review_note" || len(m.Hooks) != 3 || m.Hooks[0].Extension != "platform-guard" {
		t.Fatalf("registry = %+v", m.Registry)
	}
}

// trustManifests is a Workspace in team-b with a skill and an extension of its
// own; label is team-b's trust label ("" for none).
func trustManifests(t *testing.T, label string) string {
	t.Helper()
	dir := t.TempDir()
	ns := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-b\n"
	if label != "" {
		ns += "  labels:\n    loadout.dev/trust: " + label + "\n"
	}
	writeFiles(t, dir, map[string]string{"all.yaml": ns + `---
apiVersion: loadout.dev/v1alpha1
kind: Skill
metadata: {name: notes, namespace: team-b}
spec: {description: Team notes., body: TEAM-B-BODY}
---
apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: ext, namespace: team-b}
spec:
  tools:
    - {name: team_tool, description: A tool.}
---
apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: ws, namespace: team-b}
spec:
  tools: {builtin: [read, bash], deny: [bash]}
`})
	return dir
}

func TestPreview_TrustLevelsGateProjectResources(t *testing.T) { // R-EXT-4, docs/security.md trust levels
	cases := []struct {
		label, defaultTrust string
		wantSkill, wantTool bool
	}{
		{"untrusted", "restricted", false, false},
		{"restricted", "trusted", true, false},
		{"trusted", "restricted", true, true},
		{"", "restricted", true, false},
		{"", "untrusted", false, false},
	}
	for _, c := range cases {
		t.Run(c.label+"/"+c.defaultTrust, func(t *testing.T) {
			data := previewData(t, "-f", trustManifests(t, c.label), "--default-trust", c.defaultTrust)
			m := data[contract.KeyManifest]
			if got := strings.Contains(m, `"name": "notes"`); got != c.wantSkill {
				t.Errorf("skill loaded = %v, want %v", got, c.wantSkill)
			}
			if got := strings.Contains(m, `"name": "team_tool"`); got != c.wantTool {
				t.Errorf("extension tool loaded = %v, want %v", got, c.wantTool)
			}
			// Built-in read is registered; denied bash is not (R-EXT-5).
			mustContain(t, "manifest.json", m, `"name": "read"`)
			mustNotContain(t, "manifest.json", m, `"name": "bash"`)
		})
	}
}

func TestPreview_RootInForeignNamespaceNotPermitted(t *testing.T) { // reason RootNotPermitted
	dir := resourcestest.Tree(t, map[string]string{"ws.yaml": `apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: ws, namespace: team-a}
spec:
  roots: [{name: other, namespace: team-b}]
`})
	_, _, err := run(t, "preview", "-f", dir)
	if err == nil || !strings.Contains(err.Error(), "RootNotPermitted") || !strings.Contains(err.Error(), "spec.roots[0].namespace") {
		t.Fatalf("err = %v, want RootNotPermitted naming the field", err)
	}
}

func TestPreview_UnknownFieldNamesFileAndField(t *testing.T) {
	dir := resourcestest.Tree(t, map[string]string{"bad.yaml": "apiVersion: loadout.dev/v1alpha1\nkind: Skill\nmetadata: {name: s}\nspec: {description: d, body: b, bodyy: x}\n"})
	_, _, err := run(t, "preview", "-f", dir)
	if err == nil || !strings.Contains(err.Error(), "bad.yaml") || !strings.Contains(err.Error(), "bodyy") {
		t.Fatalf("err = %v", err)
	}
}

func TestPreview_DirectoryRootsFirstWins(t *testing.T) { // R-CAT-1, R-CAT-5
	project, platform := t.TempDir(), t.TempDir()
	writeFiles(t, project, map[string]string{
		"AGENTS.md":                  "PROJECT RULES",
		"skills/review/SKILL.md":     "---\nname: review\ndescription: Project.\n---\nPROJECT-BODY\n",
		"skills/review/checklist.md": "CHECK",
		"templates/review.md":        "Review {{file}} for {{owner}}. Focus on {{file}}.",
	})
	writeFiles(t, platform, map[string]string{"skills/review/SKILL.md": "---\nname: review\ndescription: Platform.\n---\nPLATFORM-BODY\n"})
	data := previewData(t, "--root", project, "--root", platform, "--activate", "review=checklist.md")
	mustContain(t, "system-prompt.md", data[contract.KeySystemPrompt], "PROJECT RULES", "PROJECT-BODY", "CHECK")
	for k, v := range data {
		mustNotContain(t, k, v, "PLATFORM-BODY")
	}
}

// TestPreview_PlatformInstructionsNeedTheOptInLabel: preview applies the
// controller's rule: a platform ConfigMap is readable as instructions only
// with loadout.dev/instructions: "true"; without it the Workspace fails with
// InstructionsNotFound and nothing of it is printed.
func TestPreview_PlatformInstructionsNeedTheOptInLabel(t *testing.T) {
	manifests := func(labels string) string {
		dir := resourcestest.Tree(t, map[string]string{"all.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: rules
  namespace: loadout-system
` + labels + `data: {AGENTS.md: PLATFORM-ONLY-RULES}
---
apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: ws, namespace: team-a}
spec:
  instructions: [{configMapKeyRef: {namespace: loadout-system, name: rules}}]
`})
		return dir
	}
	out, _, err := run(t, "preview", "-f", manifests(""))
	if err == nil || !strings.Contains(err.Error(), "InstructionsNotFound") {
		t.Fatalf("err = %v, want InstructionsNotFound", err)
	}
	mustNotContain(t, "preview output", out+err.Error(), "PLATFORM-ONLY-RULES")
	data := previewData(t, "-f", manifests("  labels: {loadout.dev/instructions: \"true\"}\n"))
	mustContain(t, "system-prompt.md", data[contract.KeySystemPrompt], "PLATFORM-ONLY-RULES")
}

// Preview applies the controller's platform rule: a platform namespace
// counts only with its trust label. Given a Namespace manifest without it,
// the platform's skill is left out; without a Namespace manifest, preview
// takes the namespace as installed (labelled) and the skill is in.
func TestPreview_PlatformNamespaceManifestWithoutTheTrustLabelLoadsNothing(t *testing.T) {
	manifests := func(namespace string) string {
		dir := resourcestest.Tree(t, map[string]string{"all.yaml": namespace + `apiVersion: loadout.dev/v1alpha1
kind: Skill
metadata: {name: rules, namespace: loadout-system}
spec: {description: Platform rules., body: PLATFORM-SKILL-BODY}
---
apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: ws, namespace: team-a}
spec:
  activate: [{skill: rules}]
`})
		return dir
	}
	_, _, err := run(t, "preview", "-f", manifests("apiVersion: v1\nkind: Namespace\nmetadata: {name: loadout-system}\n---\n"))
	if err == nil || !strings.Contains(err.Error(), "rules") {
		t.Fatalf("err = %v, want the activation of the unloaded platform skill to fail", err)
	}
	labelled := "apiVersion: v1\nkind: Namespace\nmetadata: {name: loadout-system, labels: {loadout.dev/trust: trusted}}\n---\n"
	for _, ns := range []string{labelled, ""} {
		data := previewData(t, "-f", manifests(ns))
		mustContain(t, "skills.json", data[contract.KeySkills], "PLATFORM-SKILL-BODY")
	}
}

// Preview applies the controller's hold rule: a trusted extension that is
// rejected keeps the last good context in the cluster, so preview prints no
// ConfigMap for it and fails naming the extension (the same Resolve decides).
func TestPreview_RejectedTrustedExtensionFailsLikeTheControllerHolds(t *testing.T) { // rule R-EXT-2, reason ExtensionRejected
	dir := resourcestest.Tree(t, map[string]string{"ws.yaml": `apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: ws, namespace: team-a}
---
apiVersion: loadout.dev/v1alpha1
kind: Extension
metadata: {name: guard, namespace: loadout-system}
spec:
  description: A guard whose hook does not compile.
  hooks:
    - name: broken
      event: BeforeToolCall
      cel: {expression: "call.name ==", message: "m"}
`})
	out, stderr, err := run(t, "preview", "-f", dir)
	if err == nil || !strings.Contains(err.Error(), "ExtensionRejected") || !strings.Contains(err.Error(), "loadout-system/guard") {
		t.Fatalf("err = %v, want ExtensionRejected naming loadout-system/guard", err)
	}
	if strings.Contains(out, "kind: ConfigMap") {
		t.Errorf("preview printed a ConfigMap the controller would not publish:\n%s", out)
	}
	mustContain(t, "stderr", stderr, "extension loadout-system/guard: Rejected")
}

// --out-dir writes each context as the directory a mounted ConfigMap is
// (what `loadout hostd --context-dir` serves): the same bytes, key by key,
// as the ConfigMap preview prints.
func TestPreview_OutDirWritesTheContextHostdServes(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, err := run(t, "preview", "-f", "../../config/samples", "--out-dir", dir); err != nil || !strings.Contains(stderr, "team-a/dev") {
		t.Fatalf("preview --out-dir: %v\n%s", err, stderr)
	}
	out, _, err := run(t, "preview", "-f", "../../config/samples", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &cm); err != nil || len(cm.Data) == 0 {
		t.Fatalf("preview -o json: %v", err)
	}
	for key, want := range cm.Data {
		got, err := os.ReadFile(filepath.Join(dir, "team-a", "dev", key))
		if err != nil || string(got) != want {
			t.Errorf("%s: %v; the file differs from the ConfigMap's key", key, err)
		}
	}
}
