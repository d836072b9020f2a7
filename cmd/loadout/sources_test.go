package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/skillmd"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// everySkillWorkspace is a Workspace in team-a that activates every skill
// of the fixture, pdf with one of its files.
func everySkillWorkspace(skills []packtest.Skill) string {
	var b strings.Builder
	b.WriteString("apiVersion: loadout.dev/v1alpha1\nkind: Workspace\nmetadata: {name: dev, namespace: team-a}\nspec:\n  activate:\n")
	for _, s := range skills {
		if s.Name == "pdf" {
			b.WriteString("  - {skill: pdf, files: [reference.md]}\n")
			continue
		}
		fmt.Fprintf(&b, "  - {skill: %s}\n", s.Name)
	}
	return b.String()
}

// TestExternalSkills_PushPreviewMaterializeByteIdentical is the "done
// when", offline: the anthropics/skills-shaped tree (17 skills, 409 files,
// over 12 MB: fonts and other binaries, two files over 1 MiB, executable
// scripts) is pushed by `import --push`; a Workspace that activates every
// printed Skill is previewed into a ConfigMap far under the 900 KiB cap; and
// `materialize` writes skills that equal the source tree file for file, byte
// for byte, mode for mode, with every active skill's body in the system
// prompt.
func TestExternalSkills_PushPreviewMaterializeByteIdentical(t *testing.T) {
	host := testnet.Registry(t)
	src := t.TempDir()
	size := packtest.WriteAll(t, src)
	all := packtest.AllSkills()
	if size < 12e6 || len(all) != 17 {
		t.Fatalf("fixture is %d bytes in %d skills, want over 12 MB in 17", size, len(all))
	}
	skills, stderr, err := run(t, "import", src, "-n", "team-a", "--push", host+"/skills")
	if err != nil {
		t.Fatalf("import --push: %v\n%s", err, stderr)
	}
	if n := strings.Count(skills, "reference: "+host+"/skills/"); n != len(all) {
		t.Fatalf("%d pinned references printed, want %d:\n%s", n, len(all), skills)
	}
	again, _, err := run(t, "import", src, "-n", "team-a", "--push", host+"/skills")
	if err != nil || again != skills {
		t.Fatalf("pushing the same tree again printed other digests (%v)", err)
	}

	manifests := resourcestest.Tree(t, map[string]string{"skills.yaml": skills, "workspace.yaml": everySkillWorkspace(all)})
	data := previewData(t, "-f", manifests)
	if bytes := resources.DataBytes(data); bytes > 32<<10 {
		t.Fatalf("published %d bytes for a %d-byte skill tree; want the catalog and pinned sources only", bytes, size)
	} else {
		t.Logf("published %d bytes for a %d-byte skill tree of %d skills", bytes, size, len(all))
	}
	for _, s := range all {
		mustContain(t, "system-prompt.md", data[contract.KeySystemPrompt], "<!-- loadout:source body \""+s.Name+"\" -->")
	}

	out := materializeData(t, data)
	packtest.Equal(t, filepath.Join(out, "skills"), src)
	prompt, err := os.ReadFile(filepath.Join(out, "system-prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "materialized system-prompt.md", string(prompt), "# Active skill: pdf\n\n# pdf\n\nRead the references", "## pdf: reference.md\n\nLorem ipsum")
	for _, s := range all {
		mustContain(t, "materialized system-prompt.md", string(prompt), "# Active skill: "+s.Name+"\n\n# "+s.Name+"\n")
	}
	mustNotContain(t, "materialized system-prompt.md", string(prompt), "loadout:source")
}

// TestImportPush_OneFileSkillAndTruncatedDescriptionMaterialize: a *.md
// skill directly in skills/ is pushed as an artifact holding it as SKILL.md,
// and a description cut by --truncate-descriptions is cut in the pushed
// SKILL.md too, so the agent side, which refuses a SKILL.md that disagrees
// with its Skill, materializes both.
func TestImportPush_OneFileSkillAndTruncatedDescriptionMaterialize(t *testing.T) {
	host := testnet.Registry(t)
	src := t.TempDir()
	long := strings.Repeat("d", 1500)
	quick := "---\nname: quick\ndescription: A one-file skill.\n---\nQUICK BODY\n"
	writeFiles(t, src, map[string]string{
		"skills/quick.md":            quick,
		"skills/long/SKILL.md":       "---\nname: long\ndescription: " + long + "\n---\nLONG BODY\n",
		"skills/long/run.sh":         "#!/bin/sh\n",
		"skills/group/deep/SKILL.md": "---\nname: deep\ndescription: Nested.\n---\nDEEP BODY\n",
	})
	if err := os.Chmod(filepath.Join(src, "skills/long/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	skills, stderr, err := run(t, "import", src, "-n", "team-a", "--push", host+"/skills", "--truncate-descriptions")
	if err != nil {
		t.Fatalf("import --push: %v\n%s", err, stderr)
	}
	manifests := resourcestest.Tree(t, map[string]string{"skills.yaml": skills, "workspace.yaml": everySkillWorkspace([]packtest.Skill{{Name: "quick"}, {Name: "long"}, {Name: "deep"}})})
	data := previewData(t, "-f", manifests)
	out := materializeData(t, data)
	got, err := os.ReadFile(filepath.Join(out, "skills", "quick", "SKILL.md"))
	if err != nil || string(got) != quick {
		t.Fatalf("materialized quick/SKILL.md = %q (%v), want the source file", got, err)
	}
	got, err = os.ReadFile(filepath.Join(out, "skills", "long", "SKILL.md"))
	if err != nil || skillmd.SkillDescription(got) != long[:1024] || !strings.HasSuffix(string(got), "\n---\nLONG BODY\n") {
		t.Fatalf("materialized long/SKILL.md = %q (%v), want the description cut to 1024 and the body kept", got, err)
	}
	if info, err := os.Stat(filepath.Join(out, "skills", "long", "run.sh")); err != nil || info.Mode().Perm() != 0o755 {
		t.Fatalf("long/run.sh: %v, %v", info, err)
	}
	prompt, err := os.ReadFile(filepath.Join(out, "system-prompt.md"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "materialized system-prompt.md", string(prompt), "QUICK BODY", "LONG BODY", "DEEP BODY")
}

// materializeData mounts previewed context data in a context directory and
// runs `loadout materialize` on it with a fresh source cache, so that the
// pinned sources are fetched; it returns the output directory.
func materializeData(t *testing.T, data map[string]string) string {
	t.Helper()
	ctxDir, out := t.TempDir(), filepath.Join(t.TempDir(), "tree")
	writeFiles(t, ctxDir, data)
	if _, stderr, err := run(t, "materialize", "--context-dir", ctxDir, "--out", out, "--source-cache", t.TempDir()); err != nil {
		t.Fatalf("materialize: %v\n%s", err, stderr)
	}
	return out
}

func TestPush_PrintsSkillPinnedToTheDigestAndIsDeterministic(t *testing.T) {
	host := testnet.Registry(t)
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
