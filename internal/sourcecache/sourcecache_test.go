package sourcecache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillfile"
	"github.com/loadout-dev/loadout/internal/skillpack"
)

// fillerFunc is a Filler that writes whatever the test says: an honest
// fetcher or a lying one.
type fillerFunc func(req FillRequest) error

func (f fillerFunc) Fill(_ context.Context, req FillRequest) error { return f(req) }
func (f fillerFunc) Reason(error) string                           { return "the filler's own reason" }

// entry is one line of a git tree object.
type entry struct{ mode, name, id string }

func treeObject(entries ...entry) []byte {
	var b []byte
	for _, e := range entries {
		id, _ := hex.DecodeString(e.id)
		b = append(append(b, e.mode+" "+e.name+"\x00"...), id...)
	}
	return b
}

// skillCommit is a commit holding skills/pdf (SKILL.md, an executable
// scripts/run.sh and a hidden file) and its proof.
func skillCommit(md string) (string, GitProof, skillpack.Tree) {
	run := "#!/bin/sh\necho run\n"
	scripts := treeObject(entry{"100755", "run.sh", gitID("blob", []byte(run))})
	pdf := treeObject(entry{"100644", ".hidden", gitID("blob", []byte("x"))}, entry{"100644", "SKILL.md", gitID("blob", []byte(md))},
		entry{"40000", "scripts", gitID("tree", scripts)})
	skills := treeObject(entry{"40000", "pdf", gitID("tree", pdf)})
	root := treeObject(entry{"100644", "README.md", gitID("blob", []byte("readme"))}, entry{"40000", "skills", gitID("tree", skills)})
	commit := []byte("tree " + gitID("tree", root) + "\nauthor t <t@example.com> 1000000000 +0000\ncommitter t <t@example.com> 1000000000 +0000\n\nskills\n")
	tree := skillpack.Tree{skillfile.New("SKILL.md", []byte(md), skillpack.ModeFile),
		skillfile.New("scripts/run.sh", []byte(run), skillpack.ModeExecutable)}
	return gitID("commit", commit), GitProof{Commit: commit, Trees: [][]byte{root, skills, pdf, scripts}}, tree
}

const pdfMD = "---\nname: pdf\ndescription: Reads PDFs.\n---\nBody\n"

// TestFetch_AFillerCannotServeAGitTreeOtherThanThePinnedCommits: a filler
// (the sidecar's fetch helper, subverted by what it parsed, or lying) writes
// a git skill's cache with other content, an extra or a missing file, a
// changed mode, another commit's proof or a tree the commit does not name:
// each is refused as a verification failure, and only the commit's own
// tree is served, without its hidden file. R-SRC-2
func TestFetch_AFillerCannotServeAGitTreeOtherThanThePinnedCommits(t *testing.T) {
	commit, proof, tree := skillCommit(pdfMD)
	src := contract.GitSource{URL: "https://example.com/skills.git", Commit: commit, Path: "skills/pdf"}
	_, otherProof, planted := skillCommit(pdfMD + "PLANTED\n")
	for name, c := range map[string]struct {
		tree  skillpack.Tree
		proof GitProof
		ok    bool
	}{
		"the commit's tree":       {tree, proof, true},
		"other content":           {planted, proof, false},
		"an extra file":           {skillpack.Tree{tree[0], skillfile.New("extra.md", []byte("x"), skillpack.ModeFile), tree[1]}, proof, false},
		"a missing file":          {tree[:1], proof, false},
		"a changed mode":          {skillpack.Tree{tree[0], skillfile.New("scripts/run.sh", tree[1].Content, skillpack.ModeFile)}, proof, false},
		"another commit's proof":  {planted, otherProof, false},
		"a tree the commit lacks": {planted, GitProof{Commit: proof.Commit, Trees: append(otherProof.Trees[2:3], proof.Trees...)}, false},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f := New(dir, fillerFunc(func(FillRequest) error { return WriteGitTree(dir, src, c.tree, c.proof) }), nil)
			got, err := f.Fetch(context.Background(), contract.SkillSource{Git: &src})
			if !c.ok {
				if err == nil || Reason(err) != ReasonVerification {
					t.Fatalf("served (err %v, reason %q), want a verification failure", err, Reason(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Path != "SKILL.md" || got[1].Path != "scripts/run.sh" || got[1].Mode != skillpack.ModeExecutable {
				t.Fatalf("tree %v, want SKILL.md and an executable scripts/run.sh", got)
			}
		})
	}
}

// TestFetch_AFillerCannotServeAnArtifactOtherThanItsDigests: a filler
// writes other bytes under a pinned manifest's digest, or under its
// layer's: the fetch fails as a verification failure and nothing is served.
// R-SRC-2
func TestFetch_AFillerCannotServeAnArtifactOtherThanItsDigests(t *testing.T) {
	tree := skillpack.Tree{skillfile.New("SKILL.md", []byte(pdfMD), skillpack.ModeFile)}
	layer, err := skillpack.Tar(tree)
	if err != nil {
		t.Fatal(err)
	}
	manifest := []byte(`{"schemaVersion":2,"artifactType":"` + skillpack.ArtifactType + `","config":{"mediaType":"` + skillpack.EmptyMediaType +
		`","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"layers":[{"mediaType":"` +
		skillpack.LayerMediaType + `","digest":"` + digestOf(layer) + `","size":` + strconv.Itoa(len(layer)) + `}]}`)
	ref := "registry.example.com/skills/pdf@" + digestOf(manifest)
	write := func(dir, digest string, b []byte) error {
		path, err := BlobPath(dir, digest)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, b, 0o644)
	}
	for name, c := range map[string]struct {
		manifest, layer []byte
		ok              bool
	}{
		"the artifact":     {manifest, layer, true},
		"another manifest": {[]byte(strings.Replace(string(manifest), `"size":2`, `"size":3`, 1)), layer, false},
		"another layer":    {manifest, append(layer[:len(layer)-1:len(layer)-1], 1), false},
		"a layer too long": {manifest, append(layer, 0), false},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f := New(dir, fillerFunc(func(FillRequest) error {
				if err := write(dir, digestOf(manifest), c.manifest); err != nil {
					return err
				}
				return write(dir, digestOf(layer), c.layer)
			}), nil)
			got, err := f.Fetch(context.Background(), contract.SkillSource{OCI: &contract.OCISource{Reference: ref}})
			if !c.ok {
				if err == nil || Reason(err) != ReasonVerification {
					t.Fatalf("served (err %v, reason %q), want a verification failure", err, Reason(err))
				}
				return
			}
			if err != nil || len(got) != 1 {
				t.Fatalf("tree %v, err %v", got, err)
			}
		})
	}
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
