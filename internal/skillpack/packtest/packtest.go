// Package packtest writes skill trees shaped like the public anthropics/skills
// repository (binary fonts and documents, executable scripts, a file over
// 1 MiB, nested reference directories), generated deterministically so tests
// run offline, and compares trees on disk byte for byte and mode for mode.
//
// Write writes five of its skills (over 4 MiB); WriteAll all seventeen, in
// the repository's size and shape: 409 files, over 12 MB.
package packtest

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/ociskill"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/skillpack"
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
var skills = []skillFiles{
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

// Skills lists the skills Write writes, in order of generation.
func Skills() []Skill {
	out := make([]Skill, 0, len(skills))
	for _, s := range skills {
		out = append(out, s.Skill)
	}
	return out
}

// Write writes five skills of the fixture below dir, one directory per skill,
// and returns their total size in bytes. The same call writes the same bytes.
func Write(t testing.TB, dir string) int64 {
	t.Helper()
	return write(t, dir, skills)
}

// AllSkills lists the seventeen skills WriteAll writes, in order of
// generation: Skills, then the others.
func AllSkills() []Skill {
	out := Skills()
	for _, s := range moreSkills() {
		out = append(out, s.Skill)
	}
	return out
}

// WriteAll writes the whole fixture, seventeen skills in 409 files and over
// 12 MB as anthropics/skills, below dir, and returns its size in bytes. The
// five skills of Write come out the same as from Write.
func WriteAll(t testing.TB, dir string) int64 {
	t.Helper()
	return write(t, dir, append(slices.Clone(skills), moreSkills()...))
}

type skillFiles = struct {
	Skill
	files []file
}

// series is n files named fmt.Sprintf(pattern, i) of size bytes each.
func series(pattern string, n, size int, binary, exec bool) []file {
	out := make([]file, n)
	for i := range out {
		out[i] = file{fmt.Sprintf(pattern, i), size, binary, exec}
	}
	return out
}

// moreSkills are the twelve skills WriteAll adds to Write's five: 386 files,
// about 7.8 MB, among them a second file over 1 MiB and a second set of fonts.
func moreSkills() []skillFiles {
	cat := func(parts ...[]file) []file { return slices.Concat(parts...) }
	return []skillFiles{
		{Skill{"algorithmic-art", "Create algorithmic art using p5.js with seeded randomness and interactive parameters."}, cat(
			series("templates/generator_%02d.js", 4, 12<<10, false, false),
			series("examples/seed-%02d.png", 12, 40<<10, true, false),
		)},
		{Skill{"artifacts-builder", "Build elaborate multi-component HTML artifacts with React, Tailwind and shadcn/ui."}, cat(
			series("scripts/step-%d.sh", 3, 3<<10, false, true),
			[]file{{"scripts/shadcn-components.tar.gz", 500 << 10, true, false}},
		)},
		{Skill{"doc-coauthoring", "Guide users through a structured workflow for co-authoring documentation."}, series("stages/stage-%d.md", 2, 6<<10, false, false)},
		{Skill{"frontend-design", "Create distinctive, production-grade frontend interfaces with high design quality."}, cat(
			series("reference/pattern-%d.md", 3, 10<<10, false, false),
			series("fonts/Display-%02d.woff2", 48, 20<<10, true, false),
		)},
		{Skill{"internal-comms", "Write internal communications such as status reports, newsletters and incident reports."}, series("examples/comm-%d.md", 6, 3<<10, false, false)},
		{Skill{"mcp-builder", "Create MCP servers that let models interact with external services through tools."}, cat(
			series("reference/guide-%d.md", 8, 20<<10, false, false),
			series("scripts/evaluate-%d.py", 4, 6<<10, false, true),
			series("evaluations/eval-%02d.xml", 10, 4<<10, false, false),
		)},
		{Skill{"pptx", "Create, edit and analyse PowerPoint presentations with layouts and speaker notes."}, cat(
			[]file{{"assets/template.pptx", 700 << 10, true, false}},
			series("ooxml/schemas/pml-%03d.xsd", 150, 8<<10, false, false),
			series("scripts/tool-%d.py", 6, 8<<10, false, true),
		)},
		{Skill{"skill-creator", "Create effective skills that extend the model with specialised knowledge."}, cat(
			series("scripts/init-%d.py", 6, 5<<10, false, true),
			series("references/workflow-%d.md", 5, 7<<10, false, false),
		)},
		{Skill{"slack-gif-creator", "Create animated GIFs optimised for Slack, with validators and animation primitives."}, cat(
			series("core/anim-%02d.py", 10, 6<<10, false, true),
			series("examples/loop-%02d.gif", 71, 30<<10, true, false),
		)},
		{Skill{"template-skill", "A template to start a new skill from."}, nil},
		{Skill{"theme-factory", "Style artifacts with one of ten preset themes or a theme generated on the fly."}, cat(
			[]file{{"theme-showcase.pdf", 1100 << 10, true, false}},
			series("themes/theme-%02d.md", 10, 2<<10, false, false),
		)},
		{Skill{"webapp-testing", "Test local web applications with Playwright, with screenshots, logs and interactions."}, cat(
			series("examples/check_%02d.py", 10, 3<<10, false, false),
			series("scripts/with_server_%d.py", 3, 4<<10, false, true),
		)},
	}
}

func write(t testing.TB, dir string, all []skillFiles) int64 {
	t.Helper()
	rng := rand.New(rand.NewChaCha8([32]byte{'l', 'o', 'a', 'd', 'o', 'u', 't'}))
	var total int64
	for _, s := range all {
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
	resourcestest.WriteFile(t, p, data, mode)
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
	realPath, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]snap{}
	err = filepath.WalkDir(realPath, func(p string, d fs.DirEntry, err error) error {
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
		rel, _ := filepath.Rel(realPath, p)
		out[strings.ReplaceAll(rel, string(filepath.Separator), "/")] = snap{info.Mode().Perm(), data}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Push packs tree and pushes it to ref (host/repository), as `loadout
// import --push` does, and returns the pinned reference; t fails on an
// error.
func Push(t testing.TB, tree skillpack.Tree, ref string) string {
	t.Helper()
	art, err := ociskill.Pack(tree)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := ociskill.Push(context.Background(), art, ref)
	if err != nil {
		t.Fatal(err)
	}
	return pinned.String()
}
