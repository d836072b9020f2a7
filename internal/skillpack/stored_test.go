package skillpack

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/internal/skillfile"
)

// storedLayer packs the skill of writeSkill plus a long path (a PAX header)
// and writes its layer to a file; it returns the tree read back with
// UntarStored, the in-memory tree and the layer's path.
func storedLayer(t *testing.T) (stored, inMemory Tree, layer string) {
	t.Helper()
	dir := t.TempDir()
	writeSkill(t, dir)
	long := filepath.Join(dir, strings.Repeat("d", 120), "long.md")
	if err := os.MkdirAll(filepath.Dir(long), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(long, []byte("past a PAX header\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inMemory = mustReadDir(t, dir)
	tarred, err := Tar(inMemory)
	if err != nil {
		t.Fatal(err)
	}
	layer = filepath.Join(t.TempDir(), "layer.tar")
	if err := os.WriteFile(layer, tarred, 0o644); err != nil {
		t.Fatal(err)
	}
	stored, err = UntarStored(bytes.NewReader(tarred), layer)
	if err != nil {
		t.Fatal(err)
	}
	return stored, inMemory, layer
}

// TestUntarStored_HoldsOnlySkillMDAndReadsTheSameFiles: a stored tree keeps
// SKILL.md in memory and every other file on disk, with the size, mode and
// Binary flag an in-memory read gives, the same bytes when read, and the
// same tar when packed again.
func TestUntarStored_HoldsOnlySkillMDAndReadsTheSameFiles(t *testing.T) {
	stored, inMemory, _ := storedLayer(t)
	if len(stored) != len(inMemory) {
		t.Fatalf("%d files, want %d", len(stored), len(inMemory))
	}
	for i, f := range stored {
		want := inMemory[i]
		if f.Path != want.Path || f.Mode != want.Mode || f.Binary != want.Binary || f.Len() != want.Len() {
			t.Fatalf("%s: path/mode/binary/len %q %o %v %d, want %q %o %v %d", want.Path, f.Path, f.Mode, f.Binary, f.Len(), want.Path, want.Mode, want.Binary, want.Len())
		}
		if inMem := f.Path == "SKILL.md"; inMem != (f.Stored == nil) {
			t.Fatalf("%s: stored = %v, want only SKILL.md in memory", f.Path, f.Stored != nil)
		}
		got, err := f.Bytes()
		if err != nil || !bytes.Equal(got, want.Content) {
			t.Fatalf("%s: read %q, %v, want %q", f.Path, got, err, want.Content)
		}
	}
	a, err := Tar(stored)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Tar(inMemory)
	if !bytes.Equal(a, b) {
		t.Fatal("a stored tree packs to other bytes than the tree it was read from")
	}
}

// TestUntarStored_ChangedLayerFailsTheRead: a byte of a stored file changed
// on disk, or the layer cut short, makes reading that file fail with
// ErrStoredChanged instead of ending as if it were whole.
func TestUntarStored_ChangedLayerFailsTheRead(t *testing.T) {
	stored, _, layer := storedLayer(t)
	f, ok := stored.File("docs/ref/deep.md")
	if !ok {
		t.Fatal("no docs/ref/deep.md")
	}
	b, err := os.ReadFile(layer)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.LastIndex(b, []byte("deep")) // the content, after its header
	changed := bytes.Clone(b)
	changed[at] = 'D'
	for name, content := range map[string][]byte{"a changed byte": changed, "a cut layer": b[:at+2]} {
		if err := os.WriteFile(layer, content, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := f.Bytes(); !errors.Is(err, ErrStoredChanged) {
			t.Errorf("%s: read %q, %v, want ErrStoredChanged", name, got, err)
		}
	}
}

// TestUTF8Validator_AgreesWithValidWhereverTheContentIsSplit: Binary of a
// stored file, decided while it streams in pieces, is skillfile.New's.
func TestUTF8Validator_AgreesWithValidWhereverTheContentIsSplit(t *testing.T) {
	texts := []string{"", "plain", "héllo wörld", "日本語", "emoji 😀 end", "\uFFFD", "bad \xff byte",
		"cut \xe6\x97", "\xe6\x97\x41", "\xf0\x9f\x98", "\x80lead", "overlong \xc0\xaf", "surrogate \xed\xa0\x80"}
	for _, text := range texts {
		want := utf8.ValidString(text)
		if want != !skillfile.New("x", []byte(text), skillfile.ModeFile).Binary {
			t.Fatalf("%q: test expectation disagrees with skillfile.New", text)
		}
		for i := 0; i <= len(text); i++ {
			for j := i; j <= len(text); j++ {
				var v utf8Validator
				_, _ = v.Write([]byte(text[:i]))
				_, _ = v.Write([]byte(text[i:j]))
				_, _ = v.Write([]byte(text[j:]))
				if v.Valid() != want {
					t.Fatalf("%q split at %d and %d: valid = %v, want %v", text, i, j, v.Valid(), want)
				}
			}
		}
	}
}
