// Package packtest writes skill trees shaped like the public anthropics/skills
// repository (binary fonts and documents, executable scripts, a file over
// 1 MiB, nested reference directories), generated deterministically so tests
// run offline, and compares trees on disk byte for byte and mode for mode.
package packtest

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Skill is one generated skill.
type Skill struct {
	Name        string
	Description string
}

// file is one generated file: size bytes of text or random binary data.
type file struct {
	path   string
	size   int
	binary bool
	exec   bool
}

// skills of the fixture, after anthropics/skills: docx carries a 1.2 MiB
// binary, canvas-design a set of fonts, the others scripts and references.
var skills = []struct {
	Skill
	files []file
}{
	{Skill{"docx", "Create, edit and analyse Word documents with tracked changes and comments."}, []file{
		{"ooxml.md", 40 << 10, false, false},
		{"scripts/document.py", 30 << 10, false, true},
		{"scripts/utilities.py", 8 << 10, false, true},
		{"ooxml/schemas/wml.xsd", 200 << 10, false, false},
		{"assets/template.docx", 1200 << 10, true, false},
	}},
	{Skill{"canvas-design", "Create visual art in .png and .pdf documents using design philosophy."}, []file{
		{"canvas-fonts/ArsenalSC-Regular.ttf", 320 << 10, true, false},
		{"canvas-fonts/BigShoulders-Bold.ttf", 410 << 10, true, false},
		{"canvas-fonts/Gloock-Regular.ttf", 280 << 10, true, false},
		{"canvas-fonts/OFL.txt", 4 << 10, false, false},
		{"canvas-fonts/Jura-Light.ttf", 700 << 10, true, false},
		{"canvas-fonts/WorkSans-Italic.ttf", 500 << 10, true, false},
	}},
	{Skill{"pdf", "Extract text and tables from PDFs, fill forms, merge and split documents."}, []file{
		{"reference.md", 16 << 10, false, false},
		{"forms.md", 9 << 10, false, false},
		{"scripts/fill_fillable_fields.py", 4 << 10, false, true},
		{"scripts/convert_pdf_to_images.py", 2 << 10, false, true},
	}},
	{Skill{"xlsx", "Create and analyse spreadsheets with formulas and formatting."}, []file{
		{"recalc.py", 6 << 10, false, true},
		{"LICENSE.txt", 2 << 10, false, false},
		{"examples/budget.xlsx", 600 << 10, true, false},
	}},
	{Skill{"brand-guidelines", "Apply the brand's official colours and typography to artifacts."}, nil},
}

// Skills lists the fixture's skills in name order of generation.
func Skills() []Skill {
	out := make([]Skill, 0, len(skills))
	for _, s := range skills {
		out = append(out, s.Skill)
	}
	return out
}

// Write writes the fixture below dir, one directory per skill, and returns
// its total size in bytes. The same call writes the same bytes.
func Write(t testing.TB, dir string) int64 {
	t.Helper()
	rng := rand.New(rand.NewChaCha8([32]byte{'l', 'o', 'a', 'd', 'o', 'u', 't'}))
	var total int64
	for _, s := range skills {
		md := fmt.Sprintf("---\nname: %s\ndescription: %s\nlicense: Complete terms in LICENSE.txt\n---\n\n# %s\n\nRead the references before you start.\n", s.Name, s.Description, s.Name)
		total += put(t, filepath.Join(dir, s.Name, "SKILL.md"), []byte(md), 0o644)
		for _, f := range s.files {
			data := make([]byte, f.size)
			if f.binary {
				for i := range data {
					data[i] = byte(rng.UintN(256))
				}
			} else {
				line := []byte("Lorem ipsum dolor sit amet, " + f.path + "\n")
				for i := range data {
					data[i] = line[i%len(line)]
				}
			}
			mode := os.FileMode(0o644)
			if f.exec {
				mode = 0o755
			}
			total += put(t, filepath.Join(dir, s.Name, filepath.FromSlash(f.path)), data, mode)
		}
	}
	return total
}

func put(t testing.TB, p string, data []byte, mode os.FileMode) int64 {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return int64(len(data))
}

// Equal fails the test unless the regular files below got and want are the
// same set, byte for byte, with the same permission bits. Symbolic links are
// followed, as agents read them.
func Equal(t testing.TB, got, want string) {
	t.Helper()
	g, w := snapshot(t, got), snapshot(t, want)
	for p, wf := range w {
		gf, ok := g[p]
		switch {
		case !ok:
			t.Errorf("%s: missing from %s", p, got)
		case gf.mode != wf.mode:
			t.Errorf("%s: mode %o, want %o", p, gf.mode, wf.mode)
		case !bytes.Equal(gf.data, wf.data):
			t.Errorf("%s: content differs (%d bytes, want %d)", p, len(gf.data), len(wf.data))
		}
	}
	for p := range g {
		if _, ok := w[p]; !ok {
			t.Errorf("%s: not in %s", p, want)
		}
	}
}

type snap struct {
	mode fs.FileMode
	data []byte
}

func snapshot(t testing.TB, dir string) map[string]snap {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]snap{}
	err = filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := os.Stat(p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(real, p)
		out[strings.ReplaceAll(rel, string(filepath.Separator), "/")] = snap{info.Mode().Perm(), data}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
