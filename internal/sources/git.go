package sources

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillfile"
	"github.com/loadout-dev/loadout/internal/skillpack"
)

// GitCredentials are https credentials by host, read from a file in the
// git-credential-store format (one https://USER:TOKEN@HOST line each) that
// the agent pod mounts from a Secret of its own namespace.
type GitCredentials struct {
	byHost map[string]*http.BasicAuth
}

// LoadGitCredentials reads a git-credential-store file; "" means none.
func LoadGitCredentials(file string) (*GitCredentials, error) {
	c := &GitCredentials{byHost: map[string]*http.BasicAuth{}}
	if file == "" {
		return c, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("git credentials: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, err := url.Parse(line)
		if err != nil || u.User == nil || u.Host == "" {
			return nil, fmt.Errorf("git credentials %s: line %d is not https://USER:TOKEN@HOST", file, n)
		}
		pass, _ := u.User.Password()
		c.byHost[u.Host] = &http.BasicAuth{Username: u.User.Username(), Password: pass}
	}
	return c, nil
}

// fetchGit reads the skill directory of a repository at one commit. The
// commit is looked up by its full id in objects go-git hashed while reading
// the pack, so the tree is the one that commit names. The tree is cached as
// a tar with its recorded hash and, like an OCI layer, served from there:
// the tree returned holds only SKILL.md in memory.
func (f *Fetcher) fetchGit(ctx context.Context, src contract.GitSource) (skillpack.Tree, error) {
	if err := f.checkGitURL(src.URL); err != nil {
		return nil, err
	}
	key := sha256Hex([]byte(src.URL + "\x00" + src.Commit + "\x00" + src.Path))
	tarPath := filepath.Join(f.opts.CacheDir, "git", key+".tar")
	if tree, err := readCachedTree(tarPath); err == nil {
		return tree, nil
	}
	tree, err := f.cloneTree(ctx, src)
	if err != nil {
		return nil, err
	}
	if err := writeCachedTree(tarPath, tree); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	tree, err = readCachedTree(tarPath)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return tree, nil
}

// writeCachedTree writes a tree as a tar at tarPath, hashing it on the way,
// and then its hash next to it; each through a temporary file and a rename.
func writeCachedTree(tarPath string, tree skillpack.Tree) error {
	h := sha256.New()
	if err := writeAtomic(tarPath, func(w io.Writer) error { return skillpack.WriteTar(io.MultiWriter(w, h), tree) }); err != nil {
		return err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return writeAtomic(tarPath+".sha256", func(w io.Writer) error {
		_, err := io.WriteString(w, sum)
		return err
	})
}

// readCachedTree reads a cached git tree if it still matches its recorded
// hash, checked while the tar streams; its files stay in the tar.
func readCachedTree(tarPath string) (skillpack.Tree, error) {
	sum, err := os.ReadFile(tarPath + ".sha256")
	if err != nil {
		return nil, err
	}
	blob, err := openVerified(tarPath, string(sum))
	if err != nil {
		return nil, err
	}
	defer blob.Close()
	return skillpack.UntarStored(blob, tarPath)
}

func (f *Fetcher) checkGitURL(raw string) error {
	switch {
	case strings.HasPrefix(raw, "https://"), strings.HasPrefix(raw, "ssh://"):
		return nil
	case f.opts.AllowLocalGit:
		return nil
	}
	return fmt.Errorf("git url %q: only https:// and ssh:// are fetched", raw)
}

func (f *Fetcher) cloneTree(ctx context.Context, src contract.GitSource) (skillpack.Tree, error) {
	opts := &git.CloneOptions{URL: src.URL, NoCheckout: true, Tags: git.NoTags}
	if u, err := url.Parse(src.URL); err == nil && f.opts.GitAuth != nil {
		if a, ok := f.opts.GitAuth.byHost[u.Host]; ok && u.Scheme == "https" {
			opts.Auth = a
		}
	}
	repo, err := fetchCommit(ctx, src.Commit, opts)
	if errors.Is(err, git.ErrExactSHA1NotSupported) {
		// The server does not serve a commit by its id: clone everything.
		repo, err = git.CloneContext(ctx, memory.NewStorage(), nil, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("clone: %w", err)
	}
	commit, err := repo.CommitObject(plumbing.NewHash(src.Commit))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", src.Commit, err)
	}
	if commit.Hash.String() != src.Commit {
		return nil, fmt.Errorf("%w: commit %s resolved to %s", errVerification, src.Commit, commit.Hash)
	}
	root, err := commit.Tree()
	if err != nil {
		return nil, err
	}
	if src.Path != "" {
		if root, err = root.Tree(src.Path); err != nil {
			return nil, fmt.Errorf("path %q at commit %s: %w", src.Path, src.Commit, err)
		}
	}
	return treeFromGit(root)
}

// fetchCommit fetches only the pinned commit and its tree (depth 1, the
// commit named by its id, no branches or tags), so memory follows the size
// of that one commit rather than of the repository's whole history. Servers
// that do not serve a commit by its id (no allow-reachable-sha1-in-want or
// allow-tip-sha1-in-want) answer git.ErrExactSHA1NotSupported.
func fetchCommit(ctx context.Context, commit string, clone *git.CloneOptions) (*git.Repository, error) {
	repo, err := git.Init(memory.NewStorage(), nil)
	if err != nil {
		return nil, err
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{clone.URL}})
	if err != nil {
		return nil, err
	}
	err = remote.FetchContext(ctx, &git.FetchOptions{
		RefSpecs: []config.RefSpec{config.RefSpec(commit + ":refs/heads/pinned")},
		Depth:    1, Tags: git.NoTags, Auth: clone.Auth,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, err
	}
	return repo, nil
}

// treeFromGit converts a git tree to a skill tree: regular and executable
// blobs keep their mode, hidden entries are left out as in a directory root,
// and a symbolic link is an error rather than a silently missing file.
func treeFromGit(t *object.Tree) (skillpack.Tree, error) {
	var out skillpack.Tree
	var size int64
	err := t.Files().ForEach(func(file *object.File) error {
		if hiddenPath(file.Name) {
			return nil
		}
		var mode = skillpack.ModeFile
		switch file.Mode {
		case filemode.Regular, filemode.Deprecated:
		case filemode.Executable:
			mode = skillpack.ModeExecutable
		case filemode.Symlink:
			return fmt.Errorf("%s: symbolic links are not supported in skill sources", file.Name)
		default:
			return fmt.Errorf("%s: unsupported git file mode %s", file.Name, file.Mode)
		}
		if size += file.Size; size > skillpack.MaxTreeBytes || len(out) >= skillpack.MaxFiles {
			return errors.New("skill directory is too large")
		}
		r, err := file.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		out = append(out, skillfile.New(file.Name, data, mode))
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortTree(out)
	return out, out.Validate()
}

func hiddenPath(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return path.Clean(p) != p
}
