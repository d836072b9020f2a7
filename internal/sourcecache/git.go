package sourcecache

import (
	"archive/tar"
	"crypto/sha1" //nolint:gosec // git names its objects by SHA-1: this checks those names against the pinned commit
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/skillpack"
)

// GitProof is what ties a cached git tree to the commit that pins it: the
// commit object and the tree objects from the commit's root down to the
// skill directory and under it, each as git stores it (without the
// "<type> <size>\0" header). Their names are their SHA-1s, so the reader
// checks the commit's own name, then each tree by the name its parent
// gives it, then every file of the cached tar by the blob name its tree
// gives it: the content is the pinned commit's whoever fetched it.
type GitProof struct {
	Commit []byte   `json:"commit"`
	Trees  [][]byte `json:"trees"`
}

// maxProof bounds a cached proof: tree objects of at most MaxFiles entries
// and the directories above them.
const maxProof = 64 << 20

// GitTreePath is where the cache under dir keeps the tree of a git source,
// as a tar (skillpack.WriteTar); its proof is beside it (proofPath).
func GitTreePath(dir string, src contract.GitSource) string {
	sum := sha256.Sum256([]byte(src.URL + "\x00" + src.Commit + "\x00" + src.Path))
	return filepath.Join(dir, "git", hex.EncodeToString(sum[:])+".tar")
}

func proofPath(tarPath string) string { return strings.TrimSuffix(tarPath, ".tar") + ".proof.json" }

// WriteGitTree caches the tree of a git source with its proof, each through
// a temporary file and a rename.
func WriteGitTree(dir string, src contract.GitSource, tree skillpack.Tree, proof GitProof) error {
	tarPath := GitTreePath(dir, src)
	if err := WriteAtomic(tarPath, func(w io.Writer) error { return skillpack.WriteTar(w, tree) }); err != nil {
		return err
	}
	return WriteAtomic(proofPath(tarPath), func(w io.Writer) error { return json.NewEncoder(w).Encode(proof) })
}

// readGit reads the cached tree of a git source, checked against its proof
// and the pinned commit as it streams; its files stay in the tar.
func readGit(dir string, src contract.GitSource) (skillpack.Tree, error) {
	tarPath := GitTreePath(dir, src)
	raw, err := published.ReadFileBounded(proofPath(tarPath), maxProof)
	if err != nil {
		return nil, err
	}
	var proof GitProof
	if err := json.Unmarshal(raw, &proof); err != nil {
		return nil, fmt.Errorf("%w: git proof: %w", ErrVerification, err)
	}
	want, err := proof.files(src.Commit, src.Path)
	if err != nil {
		return nil, err
	}
	blob, err := os.Open(tarPath)
	if err != nil {
		return nil, err
	}
	defer blob.Close()
	if fi, err := blob.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxBlob {
		return nil, fmt.Errorf("%w: cached git tree is not a file of at most %d bytes", ErrVerification, MaxBlob)
	}
	if err := checkGitTar(blob, want); err != nil {
		return nil, err
	}
	if _, err := blob.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return skillpack.UntarStored(blob, tarPath)
}

// gitFile is a file the commit's tree holds: its blob's name and whether
// it is executable.
type gitFile struct {
	id   string
	exec bool
}

// gitID is git's name of an object: the SHA-1 of its header and content.
func gitID(kind string, content []byte) string {
	h := sha1.New() //nolint:gosec // git's object names
	fmt.Fprintf(h, "%s %d\x00", kind, len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// files checks the proof against commit and returns the files of the
// directory dir of the commit's tree, by path below dir: regular and
// executable blobs; hidden entries are left out and submodules skipped, as
// the fetcher leaves them out; a symbolic link is an error.
func (p GitProof) files(commit, dir string) (map[string]gitFile, error) {
	if gitID("commit", p.Commit) != commit {
		return nil, fmt.Errorf("%w: the cached commit object is not commit %s", ErrVerification, commit)
	}
	root, ok := strings.CutPrefix(string(p.Commit), "tree ")
	if !ok || len(root) < 41 || root[40] != '\n' {
		return nil, fmt.Errorf("%w: commit %s names no tree", ErrVerification, commit)
	}
	trees := make(map[string][]byte, len(p.Trees))
	for _, t := range p.Trees {
		trees[gitID("tree", t)] = t
	}
	id := root[:40]
	for _, seg := range strings.Split(dir, "/") {
		if dir == "" {
			break
		}
		entries, err := parseTree(trees, id)
		if err != nil {
			return nil, err
		}
		next := ""
		for _, e := range entries {
			if e.name == seg && e.mode == "40000" {
				next = e.id
			}
		}
		if next == "" {
			return nil, fmt.Errorf("path %q at commit %s: no such directory", dir, commit)
		}
		id = next
	}
	out := map[string]gitFile{}
	return out, walkTree(trees, id, "", out)
}

// walkTree adds the files of tree id, under prefix, to out.
func walkTree(trees map[string][]byte, id, prefix string, out map[string]gitFile) error {
	entries, err := parseTree(trees, id)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := prefix + e.name
		switch {
		case strings.HasPrefix(e.name, "."):
		case e.mode == "40000":
			if err := walkTree(trees, e.id, p+"/", out); err != nil {
				return err
			}
		case e.mode == "160000":
		case e.mode == "100644", e.mode == "100664":
			out[p] = gitFile{id: e.id}
		case e.mode == "100755":
			out[p] = gitFile{id: e.id, exec: true}
		case e.mode == "120000":
			return fmt.Errorf("%s: symbolic links are not supported in skill sources", p)
		default:
			return fmt.Errorf("%s: unsupported git file mode %s", p, e.mode)
		}
		if len(out) > skillpack.MaxFiles {
			return errors.New("skill directory is too large")
		}
	}
	return nil
}

type treeEntry struct{ mode, name, id string }

// parseTree parses the proof's tree object named id: entries of
// "<mode> <name>\0<20-byte id>".
func parseTree(trees map[string][]byte, id string) ([]treeEntry, error) {
	raw, ok := trees[id]
	if !ok {
		return nil, fmt.Errorf("%w: the proof lacks tree %s", ErrVerification, id)
	}
	var out []treeEntry
	for len(raw) > 0 {
		mode, rest, ok1 := strings.Cut(string(raw), " ")
		name, rest, ok2 := strings.Cut(rest, "\x00")
		if !ok1 || !ok2 || len(rest) < 20 || name == "" || strings.Contains(name, "/") || name == ".." {
			return nil, fmt.Errorf("%w: tree %s does not parse", ErrVerification, id)
		}
		out = append(out, treeEntry{mode: mode, name: name, id: hex.EncodeToString([]byte(rest[:20]))})
		raw = raw[len(raw)-len(rest)+20:]
	}
	return out, nil
}

// checkGitTar checks that the cached tar holds exactly the files of want,
// each with its mode and the content its blob name says.
func checkGitTar(r io.Reader, want map[string]gitFile) error {
	tr := tar.NewReader(r)
	buf := make([]byte, 32<<10)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: cached git tree: %w", ErrVerification, err)
		}
		f, ok := want[hdr.Name]
		if !ok || hdr.Typeflag != tar.TypeReg || (hdr.Mode&0o111 != 0) != f.exec {
			return fmt.Errorf("%w: %s is not a file of that mode at the pinned commit", ErrVerification, hdr.Name)
		}
		h := sha1.New() //nolint:gosec // git's object names
		h.Write([]byte("blob " + strconv.FormatInt(hdr.Size, 10) + "\x00"))
		if n, err := io.CopyBuffer(h, tr, buf); err != nil || n != hdr.Size {
			return fmt.Errorf("%w: cached git tree: %s is cut short", ErrVerification, hdr.Name)
		}
		if hex.EncodeToString(h.Sum(nil)) != f.id {
			return fmt.Errorf("%w: %s is not the blob the pinned commit names", ErrVerification, hdr.Name)
		}
		delete(want, hdr.Name)
	}
	for p := range want {
		return fmt.Errorf("%w: the cached git tree lacks %s", ErrVerification, p)
	}
	return nil
}
