package skilldir

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// TestDirRoot_BinaryAndExecutableFilesAreKept: a directory skill's font and
// script reach skills.json (base64 and executable) instead of being dropped.
func TestDirRoot_BinaryAndExecutableFilesAreKept(t *testing.T) {
	font := []byte{0, 1, 2, 0xff, 0xfe, 'x'}
	dir := resourcestest.Tree(t, map[string]string{"skills/canvas/SKILL.md": resourcestest.SkillMD("canvas", "Draws.", "Draw."),
		"skills/canvas/font.ttf": string(font)})
	if err := os.WriteFile(filepath.Join(dir, "skills/canvas/run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, diags, err := LoadRoot("project", dir, Options{})
	if err != nil || len(diags) != 0 {
		t.Fatalf("load: %v %v", diags, err)
	}
	res, err := resources.Render(resources.Input{Roots: []resources.Root{root}})
	if err != nil {
		t.Fatal(err)
	}
	var doc contract.Skills
	if err := json.Unmarshal([]byte(res.Data[contract.KeySkills]), &doc); err != nil {
		t.Fatal(err)
	}
	got, err := published.SkillFiles(doc.Skills[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Path != "font.ttf" || !bytes.Equal(got[0].Content, font) || !got[0].Binary ||
		got[1].Path != "run.sh" || !got[1].Executable() || got[1].Binary {
		t.Fatalf("files = %+v", got)
	}
	pc, err := published.Parse(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Activate("canvas", []string{"font.ttf"}); err == nil || !strings.Contains(err.Error(), "binary file") {
		t.Fatalf("activating a binary file into the prompt: %v", err)
	}
}
