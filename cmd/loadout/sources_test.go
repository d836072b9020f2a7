package main

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
)

// startRegistry serves an in-process OCI registry on loopback.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

const pdfWorkspace = `apiVersion: loadout.dev/v1alpha1
kind: Workspace
metadata: {name: dev, namespace: team-a}
spec:
  activate: [{skill: pdf, files: [reference.md]}]
`

// TestExternalSkills_PushPreviewMaterializeByteIdentical is issue 14 end to
// end, offline: an anthropics/skills-shaped tree of over 4 MiB (fonts, a
// 1.2 MiB binary, executable scripts) is pushed by `import --push`, the
// printed Skills and a Workspace are previewed into a ConfigMap far under the
// cap, and `materialize` writes skills that equal the source tree file for
// file, byte for byte, mode for mode, with the active skill's body in the
// system prompt.
func TestExternalSkills_PushPreviewMaterializeByteIdentical(t *testing.T) {
	host := startRegistry(t)
	src := t.TempDir()
	size := packtest.Write(t, src)
	if size < 4<<20 {
		t.Fatalf("fixture is %d bytes, want over 4 MiB", size)
	}
	skills, stderr, err := run(t, "import", src, "-n", "team-a", "--push", host+"/skills")
	if err != nil {
		t.Fatalf("import --push: %v\n%s", err, stderr)
	}
	if n := strings.Count(skills, "reference: "+host+"/skills/"); n != len(packtest.Skills()) {
		t.Fatalf("%d pinned references printed, want %d:\n%s", n, len(packtest.Skills()), skills)
	}
	again, _, err := run(t, "import", src, "-n", "team-a", "--push", host+"/skills")
	if err != nil || again != skills {
		t.Fatalf("pushing the same tree again printed other digests (%v)", err)
	}

	manifests := t.TempDir()
	writeFiles(t, manifests, map[string]string{"skills.yaml": skills, "workspace.yaml": pdfWorkspace})
	data := previewData(t, "-f", manifests)
	if bytes := resources.DataBytes(data); bytes > 32<<10 {
		t.Fatalf("published %d bytes for a %d-byte skill tree; want the catalog and pinned sources only", bytes, size)
	}
	mustContain(t, "system-prompt.md", data[contract.KeySystemPrompt], "<!-- loadout:source body \"pdf\" -->")

	ctxDir, out := t.TempDir(), filepath.Join(t.TempDir(), "tree")
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(ctxDir, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, stderr, err := run(t, "materialize", "--context-dir", ctxDir, "--out", out, "--source-cache", t.TempDir()); err != nil {
		t.Fatalf("materialize: %v\n%s", err, stderr)
	}
	packtest.Equal(t, filepath.Join(out, "skills"), src)
	prompt, err := os.ReadFile(filepath.Join(out, "system-prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "materialized system-prompt.md", string(prompt), "# Active skill: pdf\n\n# pdf\n\nRead the references", "## pdf: reference.md\n\nLorem ipsum")
	mustNotContain(t, "materialized system-prompt.md", string(prompt), "loadout:source")
}

func TestPush_PrintsSkillPinnedToTheDigestAndIsDeterministic(t *testing.T) {
	host := startRegistry(t)
	src := t.TempDir()
	packtest.Write(t, src)
	first, stderr, err := run(t, "push", filepath.Join(src, "docx"), host+"/skills/docx:v1", "-n", "team-a")
	if err != nil {
		t.Fatalf("push: %v\n%s", err, stderr)
	}
	mustContain(t, "push output", first, "kind: Skill", "name: docx", "namespace: team-a",
		"description: Create, edit and analyse Word documents", "reference: "+host+"/skills/docx@sha256:")
	mustNotContain(t, "push output", first, "body:", "files:", ":v1@")
	second, _, err := run(t, "push", filepath.Join(src, "docx"), host+"/skills/docx")
	if err != nil || strings.ReplaceAll(first, "  namespace: team-a\n", "") != second {
		t.Fatalf("same directory, other output (%v):\n%s\n%s", err, first, second)
	}
	if _, _, err := run(t, "push", src, host+"/skills/all"); err == nil || !strings.Contains(err.Error(), "not a skill directory") {
		t.Fatalf("push of a directory of skills: %v", err)
	}
}
