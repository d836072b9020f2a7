package sources

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillfile"
	"github.com/loadout-dev/loadout/internal/skillmd"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/sourcecache"
)

// GitCredentials are https credentials by host, read from a file in the
// git-credential-store format (one https://USER:TOKEN@HOST line each) that
// the agent pod mounts from a Secret of its own namespace.
type GitCredentials struct {
	byHost map[string]*http.BasicAuth
}

// auth is the https credentials for a git host, if any.
func (g *GitCredentials) auth(host string) (*http.BasicAuth, bool) {
	if g == nil {
		return nil, false
	}
	a, ok := g.byHost[host]
	return a, ok
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

// fillGit caches the skill directory of a repository at one commit with
// the git objects that tie it to the commit (sourcecache.GitProof): the
// Fetcher's read checks the tree against the pinned commit by them.
func (f *Fetcher) fillGit(ctx context.Context, src contract.GitSource) error {
	if err := f.checkGitURL(src.URL); err != nil {
		return err
	}
	return f.cloneToCache(ctx, src)
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

// cloneToCache clones the pinned commit into a temporary object store on
// disk under the cache directory and writes the skill directory's tree to
// tarPath, streaming each file from the store. Nothing of the repository is
// held whole in memory: the pack goes to disk as it arrives, and objects
// over gitLargeObject bytes are read from it when needed, so memory stays
// flat whatever the commit (or, from a server that serves no commit by its
// id, the whole repository) holds besides the skill.
func (f *Fetcher) cloneToCache(ctx context.Context, src contract.GitSource) error {
	tarPath := sourcecache.GitTreePath(f.opts.CacheDir, src)
	opts := &git.CloneOptions{URL: src.URL, NoCheckout: true, Tags: git.NoTags}
	creds, err := f.gitCredentials()
	if err != nil {
		return err
	}
	if u, err := url.Parse(src.URL); err == nil && u.Scheme == "https" {
		if a, ok := creds.auth(u.Host); ok {
			opts.Auth = a
		}
	}
	if err := os.MkdirAll(filepath.Dir(tarPath), 0o755); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(tarPath), "clone-")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	defer os.RemoveAll(dir)
	repo, err := fetchCommit(ctx, f.gitStore(filepath.Join(dir, "commit")), src.Commit, opts)
	if errors.Is(err, git.ErrExactSHA1NotSupported) {
		// The server does not serve a commit by its id: clone everything.
		repo, err = git.CloneContext(ctx, f.gitStore(filepath.Join(dir, "all")), nil, opts)
	}
	if err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	commit, err := repo.CommitObject(plumbing.NewHash(src.Commit))
	if err != nil {
		return fmt.Errorf("commit %s: %w", src.Commit, err)
	}
	if commit.Hash.String() != src.Commit {
		return fmt.Errorf("%w: commit %s resolved to %s", sourcecache.ErrVerification, src.Commit, commit.Hash)
	}
	root, err := commit.Tree()
	if err != nil {
		return err
	}
	proof := sourcecache.GitProof{}
	if proof.Commit, err = rawObject(repo, commit.Hash); err != nil {
		return err
	}
	if src.Path != "" {
		// The trees from the root down to the skill directory.
		t := root
		for _, seg := range strings.Split(src.Path, "/") {
			raw, err := rawObject(repo, t.Hash)
			if err != nil {
				return err
			}
			proof.Trees = append(proof.Trees, raw)
			if t, err = t.Tree(seg); err != nil {
				return fmt.Errorf("path %q at commit %s: %w", src.Path, src.Commit, err)
			}
		}
		root = t
	}
	if err := treeProof(repo, root, &proof); err != nil {
		return err
	}
	tree, err := treeFromGit(root)
	if err != nil {
		return err
	}
	if err := sourcecache.WriteGitTree(f.opts.CacheDir, src, tree, proof); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}

// rawObject is the stored content of a git object: what its name hashes,
// after the header.
func rawObject(repo *git.Repository, h plumbing.Hash) ([]byte, error) {
	obj, err := repo.Storer.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return nil, err
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, obj.Size()))
}

// treeProof adds t and every tree under it that the skill's files come
// from (hidden directories are left out of the skill, and so of the proof)
// to proof.
func treeProof(repo *git.Repository, t *object.Tree, proof *sourcecache.GitProof) error {
	raw, err := rawObject(repo, t.Hash)
	if err != nil {
		return err
	}
	proof.Trees = append(proof.Trees, raw)
	for _, e := range t.Entries {
		if e.Mode != filemode.Dir || strings.HasPrefix(e.Name, ".") {
			continue
		}
		sub, err := t.Tree(e.Name)
		if err != nil {
			return err
		}
		if err := treeProof(repo, sub, proof); err != nil {
			return err
		}
	}
	return nil
}

const (
	// gitObjectCache bounds go-git's cache of decoded objects (96 MiB by default).
	gitObjectCache = 4 * cache.MiByte
	// gitLargeObject is the size over which an object is read from the pack
	// on disk when needed instead of decoded into memory.
	gitLargeObject = 1 << 20
	// gitMaxFetchBytes bounds the pack (and its index) one fetch writes to
	// disk: room for a commit, or from a server that serves no commit by
	// id a whole repository, of twice the largest skill tree.
	gitMaxFetchBytes = 2 * skillpack.MaxTreeBytes
)

// gitStore is an object store in dir on disk with a small object cache,
// which may receive at most gitFetchBytes. It keeps no file open between
// reads (go-git's default), so removing dir afterwards is all the cleanup it
// needs.
func (f *Fetcher) gitStore(dir string) *filesystem.Storage {
	fs := newBudgetFS(osfs.New(dir, osfs.WithBoundOS()), f.gitFetchBytes)
	return filesystem.NewStorageWithOptions(fs, cache.NewObjectLRU(gitObjectCache),
		filesystem.Options{ExclusiveAccess: true, LargeObjectThreshold: gitLargeObject})
}

// fetchCommit fetches only the pinned commit and its tree (depth 1, the
// commit named by its id, no branches or tags) into store, so what is
// fetched follows the size of that one commit rather than of the
// repository's whole history. Servers that do not serve a commit by its id
// (no allow-reachable-sha1-in-want or allow-tip-sha1-in-want) answer
// git.ErrExactSHA1NotSupported.
func fetchCommit(ctx context.Context, store *filesystem.Storage, commit string, clone *git.CloneOptions) (*git.Repository, error) {
	repo, err := git.Init(store, nil)
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
		if file.Name != skillmd.FileName {
			out = append(out, skillfile.File{Path: file.Name, Mode: mode, Stored: gitBlob(file)})
			return nil
		}
		// SKILL.md is held in memory, as in every tree.
		r, err := file.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err := io.ReadAll(io.LimitReader(r, file.Size+1))
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

// gitBlob is a file of a cloned tree, read from the clone's object store
// when the cache tar is written rather than held in memory. Its reader
// checks the blob's size and git object id as it streams: the check Stored
// asks of every opener, against the id the commit's tree names instead of a
// SHA-256 (left zero; the cache tar written from it records its own hash).
func gitBlob(file *object.File) *skillfile.Stored {
	return &skillfile.Stored{Size: file.Size, Open: func() (io.ReadCloser, error) {
		r, err := file.Reader()
		if err != nil {
			return nil, err
		}
		return &gitBlobReader{r: r, hasher: plumbing.NewHasher(plumbing.BlobObject, file.Size), want: file.Hash, left: file.Size}, nil
	}}
}

// gitBlobReader fails the read that reaches the end when the bytes read are
// not the blob its id names.
type gitBlobReader struct {
	r      io.ReadCloser
	hasher plumbing.Hasher
	want   plumbing.Hash
	left   int64
}

func (g *gitBlobReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.hasher.Write(p[:n])
	g.left -= int64(n)
	if g.left < 0 {
		return n, fmt.Errorf("%w: blob %s is longer than its size", sourcecache.ErrVerification, g.want)
	}
	if errors.Is(err, io.EOF) && (g.left != 0 || g.hasher.Sum() != g.want) {
		return n, fmt.Errorf("%w: blob %s does not match its id", sourcecache.ErrVerification, g.want)
	}
	return n, err
}

func (g *gitBlobReader) Close() error { return g.r.Close() }

func hiddenPath(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return path.Clean(p) != p
}
