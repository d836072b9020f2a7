package materialize

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
)

// FuzzBuildWrite feeds hostile skill names, template names and file paths:
// Build either refuses them with an error or the written tree stays inside
// OUT, and nothing panics.
func FuzzBuildWrite(f *testing.F) {
	for _, seed := range [][3]string{
		{"review", "review", "checklist.md"},
		{"../x", "t", "a"},
		{"ok", "../../t", "../../../etc/passwd"},
		{"ok", "t", "a/./b"},
		{"ok", "t", "SKILL.md"},
		{"ok", "t", "\x00"},
	} {
		f.Add(seed[0], seed[1], seed[2], "content")
	}
	f.Fuzz(func(t *testing.T, skill, template, file, content string) {
		in := Input{
			Skills:    []contract.SkillDoc{{Name: skill, Description: "d", Body: content, Files: []contract.FileDoc{{Path: file, Content: content}}}},
			Templates: []contract.TemplateDoc{{Name: template, Body: content}},
		}
		tree, err := Build(context.Background(), in, Options{})
		if err != nil {
			return
		}
		parent := t.TempDir()
		out := filepath.Join(parent, "out")
		if _, err := Write(out, tree); err != nil {
			t.Fatalf("Build accepted what Write refused: %v", err)
		}
		entries, _ := os.ReadDir(parent)
		if len(entries) != 1 {
			t.Fatalf("written beside OUT: %v", entries)
		}
		realPath, _ := filepath.EvalSymlinks(filepath.Join(out, DataLink))
		_ = filepath.WalkDir(realPath, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !strings.HasPrefix(p, realPath) {
				t.Errorf("%s outside %s", p, realPath)
			}
			return nil
		})
		b, err := os.ReadFile(filepath.Join(out, SkillsDir, skill, filepath.FromSlash(file)))
		if err != nil || string(b) != content {
			t.Errorf("file %q of skill %q: %q, %v", file, skill, b, err)
		}
	})
}
