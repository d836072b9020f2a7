package materialize

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillfile"
)

// storedSource stands in for a fetched source whose files stay on disk: its
// one file is Stored, opened through open.
type storedSource struct {
	content []byte
	open    func() (io.ReadCloser, error)
}

func (s storedSource) SkillContent(ctx context.Context, d contract.SkillDoc) (SkillContent, error) {
	if d.Name != "remote" {
		return InlineContent{}.SkillContent(ctx, d)
	}
	stored := &skillfile.Stored{Size: int64(len(s.content)), SHA256: sha256.Sum256(s.content), Open: s.open}
	return SkillContent{Body: "fetched body\n", Files: []File{{Path: "data.bin", Mode: skillfile.ModeFile, Binary: true, Stored: stored}}}, nil
}

var errChanged = errors.New("changed on disk")

// failingAtEnd reads its content and then fails, as a stored file's reader
// does when the bytes no longer hash to what was verified.
type failingAtEnd struct{ r io.Reader }

func (f failingAtEnd) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		err = errChanged
	}
	return n, err
}

// TestWrite_StoredFileIsStreamedAndOneThatFailsIsNeverSwappedIn: a skill
// file held on disk is written from its reader, counts its size against the
// limits, and enters the digest by its hash; when its reader fails, Write
// fails and the previous generation stays current.
func TestWrite_StoredFileIsStreamedAndOneThatFailsIsNeverSwappedIn(t *testing.T) {
	in := sampleInput()
	in.Skills = append(in.Skills, contract.SkillDoc{Name: "remote", Description: "from an artifact"})
	content := bytes.Repeat([]byte{0xff, 0x00, 'x'}, 100_000)
	opens := 0
	good := storedSource{content: content, open: func() (io.ReadCloser, error) {
		opens++
		return io.NopCloser(bytes.NewReader(content)), nil
	}}
	tree := mustBuild(t, in, Options{Source: good})
	if opens != 0 {
		t.Fatalf("Build read the stored file %d times; it must leave it on disk", opens)
	}
	if _, err := Build(context.Background(), in, Options{Source: good, Limits: Limits{MaxFileBytes: int64(len(content)) - 1}}); err == nil {
		t.Fatal("a stored file over MaxFileBytes was accepted")
	}
	out := t.TempDir()
	mustWrite(t, out, tree)
	if got, err := os.ReadFile(filepath.Join(out, SkillsDir, "remote", "data.bin")); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("written %d bytes, %v; want the stored %d", len(got), err, len(content))
	}

	changed := append(bytes.Clone(content[:len(content)-1]), 'y')
	failing := storedSource{content: changed, open: func() (io.ReadCloser, error) {
		return io.NopCloser(failingAtEnd{bytes.NewReader(changed)}), nil
	}}
	next := mustBuild(t, in, Options{Source: failing})
	if next.Digest() == tree.Digest() {
		t.Fatal("stored files of other hashes give the same digest")
	}
	if _, err := Write(out, next); !errors.Is(err, errChanged) {
		t.Fatalf("Write of a stored file whose reader fails: %v, want errChanged", err)
	}
	if got, err := os.ReadFile(filepath.Join(out, SkillsDir, "remote", "data.bin")); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("after the failed write the skill reads %d bytes, %v; want the previous generation", len(got), err)
	}
}
