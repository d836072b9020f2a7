package sources

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// testRegistry is an in-process OCI registry on loopback that counts
// requests and can tamper with what it serves.
type testRegistry struct {
	srv      *httptest.Server
	requests atomic.Int64
	// tamperBlobs flips a byte of every blob served; tamperManifests does
	// the same to manifests.
	tamperBlobs, tamperManifests atomic.Bool
	// user and password, when set, are required (basic auth).
	user, password string
}

func newTestRegistry(t *testing.T) *testRegistry {
	t.Helper()
	r := &testRegistry{}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if r.user != "" {
			if u, p, ok := req.BasicAuth(); !ok || u != r.user || p != r.password {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
				return
			}
		}
		tamper := req.Method == http.MethodGet &&
			(r.tamperBlobs.Load() && strings.Contains(req.URL.Path, "/blobs/") ||
				r.tamperManifests.Load() && strings.Contains(req.URL.Path, "/manifests/"))
		if !tamper {
			inner.ServeHTTP(w, req)
			return
		}
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		if len(body) > 0 {
			body[len(body)/2] ^= 0xff
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *testRegistry) host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// pushFixture pushes the fixture's skill name (packtest) as skills/name.
func (r *testRegistry) pushFixture(t *testing.T, name string) contract.SkillSource {
	t.Helper()
	dir := t.TempDir()
	packtest.Write(t, dir)
	return r.push(t, filepath.Join(dir, name), "skills/"+name)
}

// push packs a skill directory and pushes it, returning the pinned source.
func (r *testRegistry) push(t *testing.T, dir, repo string) contract.SkillSource {
	t.Helper()
	tree, err := skillpack.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return contract.SkillSource{OCI: &contract.OCISource{Reference: packtest.Push(t, tree, r.host()+"/"+repo)}}
}

// writeTree writes a fetched tree below dir with its modes, reading each
// stored file from the cache.
func writeTree(t *testing.T, dir string, tree skillpack.Tree) {
	t.Helper()
	for _, f := range tree {
		content, err := f.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		resourcestest.WriteFile(t, filepath.Join(dir, filepath.FromSlash(f.Path)), content, fs.FileMode(f.Mode))
	}
}

// TestFetch_AnthropicsShapedPackComesOutByteIdentical: every skill of the
// fixture (fonts, a 1.2 MiB document, executable scripts) pushed and fetched
// by digest is the same tree, byte for byte and mode for mode.
func TestFetch_AnthropicsShapedPackComesOutByteIdentical(t *testing.T) {
	reg := newTestRegistry(t)
	src := t.TempDir()
	if size := packtest.Write(t, src); size < 4<<20 {
		t.Fatalf("fixture is %d bytes; the test needs over 4 MiB", size)
	}
	f := New(Options{CacheDir: t.TempDir()})
	out := t.TempDir()
	for _, s := range packtest.Skills() {
		source := reg.push(t, filepath.Join(src, s.Name), "skills/"+s.Name)
		tree, err := f.Fetch(context.Background(), source)
		if err != nil {
			t.Fatal(err)
		}
		writeTree(t, filepath.Join(out, s.Name), tree)
	}
	packtest.Equal(t, out, src)
}

func TestFetch_OncePerDigestThenFromTheVerifiedCache(t *testing.T) {
	reg := newTestRegistry(t)
	source := reg.pushFixture(t, "pdf")
	cache := t.TempDir()
	if _, err := New(Options{CacheDir: cache}).Fetch(context.Background(), source); err != nil {
		t.Fatal(err)
	}
	before := reg.requests.Load()
	if _, err := New(Options{CacheDir: cache}).Fetch(context.Background(), source); err != nil {
		t.Fatal(err)
	}
	if n := reg.requests.Load() - before; n != 0 {
		t.Fatalf("second fetch of the same digest made %d registry requests, want 0", n)
	}
	// A cached blob changed on disk is not used: it is fetched again.
	blobs, _ := filepath.Glob(filepath.Join(cache, "blobs", "sha256", "*"))
	for _, b := range blobs {
		if err := os.WriteFile(b, []byte("tampered"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := New(Options{CacheDir: cache}).Fetch(context.Background(), source)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tree.File("scripts/fill_fillable_fields.py"); !ok || reg.requests.Load() == before {
		t.Fatal("a tampered cache was used instead of refetching")
	}
}

func TestFetch_TamperedBlobOrManifestIsRefused(t *testing.T) {
	reg := newTestRegistry(t)
	source := reg.pushFixture(t, "xlsx")
	for name, flag := range map[string]*atomic.Bool{"blob": &reg.tamperBlobs, "manifest": &reg.tamperManifests} {
		flag.Store(true)
		_, err := New(Options{CacheDir: t.TempDir()}).Fetch(context.Background(), source)
		flag.Store(false)
		if err == nil {
			t.Fatalf("tampered %s accepted", name)
		}
		if !strings.Contains(err.Error(), source.OCI.Reference) {
			t.Errorf("tampered %s: error %q does not name the source", name, err)
		}
	}
}

func TestFetch_WrongDigestIsRefused(t *testing.T) {
	reg := newTestRegistry(t)
	source := reg.pushFixture(t, "pdf")
	wrong := source.OCI.Reference[:len(source.OCI.Reference)-64] + strings.Repeat("0", 64)
	_, err := New(Options{CacheDir: t.TempDir()}).Fetch(context.Background(), contract.SkillSource{OCI: &contract.OCISource{Reference: wrong}})
	if err == nil {
		t.Fatal("a digest the registry does not hold was accepted")
	}
	tag := strings.Split(source.OCI.Reference, "@")[0] + ":latest"
	if _, err := New(Options{CacheDir: t.TempDir()}).Fetch(context.Background(), contract.SkillSource{OCI: &contract.OCISource{Reference: tag}}); err == nil || !strings.Contains(err.Error(), "pinned by digest") {
		t.Fatalf("a tag was fetched: %v", err)
	}
}

// loginRegistry is a test registry holding the fixture's pdf skill that,
// once it is pushed, needs the login team-a / s3cret.
func loginRegistry(t *testing.T) (*testRegistry, contract.SkillSource) {
	t.Helper()
	reg := newTestRegistry(t)
	source := reg.pushFixture(t, "pdf")
	reg.user, reg.password = "team-a", "s3cret"
	return reg, source
}

// TestFetch_CredentialsComeOnlyFromThePodsDockerConfig: the registry needs a
// login; the fetcher has it only when the agent pod's mounted docker config
// holds it for that registry host. Nothing in a source can supply or select
// another credential.
func TestFetch_CredentialsComeOnlyFromThePodsDockerConfig(t *testing.T) {
	reg, source := loginRegistry(t)

	if _, err := New(Options{CacheDir: t.TempDir()}).Fetch(context.Background(), source); err == nil {
		t.Fatal("fetched without credentials from a registry that needs them")
	}
	other := writeDockerConfig(t, "registry.other-tenant.example", "team-b", "theirs")
	if _, err := fetchWith(t, other, source); err == nil {
		t.Fatal("fetched with a credential for another registry")
	}
	own := writeDockerConfig(t, reg.host(), "team-a", "s3cret")
	if _, err := fetchWith(t, own, source); err != nil {
		t.Fatalf("fetch with the pod's own credential: %v", err)
	}
}

// TestFetch_CredentialsDirIsReadAtEachFetch: with a credentials directory
// (the optional Secret volume the agent-pod policy mounts into hostd), a
// fetch before the Secret exists is refused by the registry; once its
// .dockerconfigjson appears the next fetch by the same fetcher logs in; a
// malformed file fails the fetch with a reason naming the file, not its
// content.
func TestFetch_CredentialsDirIsReadAtEachFetch(t *testing.T) {
	reg, source := loginRegistry(t)

	creds := t.TempDir()
	f := New(Options{CacheDir: t.TempDir(), CredentialsDir: creds})
	_, err := f.Fetch(context.Background(), source)
	if got := Reason(err); got != "registry answered HTTP 401" {
		t.Fatalf("fetch before the Secret exists: reason %q (%v), want the registry's 401", got, err)
	}

	file := filepath.Join(creds, CredentialsDockerConfig)
	if err := os.WriteFile(file, []byte(`{"auths": not json, s3cret-looking`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = f.Fetch(context.Background(), source)
	if got, want := Reason(err), "the source credentials "+file+" cannot be read (see hostd's log)"; got != want {
		t.Fatalf("malformed credentials: reason %q, want %q", got, want)
	}

	if err := os.Rename(writeDockerConfig(t, reg.host(), "team-a", "s3cret"), file); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Fetch(context.Background(), source); err != nil {
		t.Fatalf("fetch once the Secret's config is there: %v", err)
	}
}

func fetchWith(t *testing.T, config string, source contract.SkillSource) (skillpack.Tree, error) {
	t.Helper()
	kc, err := LoadDockerConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{CacheDir: t.TempDir(), Keychain: kc}).Fetch(context.Background(), source)
}

func writeDockerConfig(t *testing.T, host, user, password string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	if err := os.WriteFile(p, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, auth), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFetch_MemoryDoesNotGrowWithTheSkill: fetching a skill allocates about
// the same whether it holds 16 or 64 MiB of incompressible files, from the
// registry and from the verified cache: the layer is streamed to the cache
// and verified while it streams, and the tree keeps only SKILL.md in memory,
// its other files read from the cache when they are used.
func TestFetch_MemoryDoesNotGrowWithTheSkill(t *testing.T) {
	reg := newTestRegistry(t)
	f := New(Options{CacheDir: t.TempDir()})
	const bound = 4 << 20 // a fixed allowance, well under the smaller skill
	for _, size := range []int{16 << 20, 64 << 20} {
		source := reg.push(t, writeRandomSkill(t, size), fmt.Sprintf("skills/big-%d", size>>20))
		for _, from := range []string{"the registry", "the cache"} {
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			tree, err := f.Fetch(context.Background(), source)
			runtime.ReadMemStats(&m1)
			if err != nil {
				t.Fatal(err)
			}
			if tree.Size() < int64(size) {
				t.Fatalf("tree of %d bytes, want %d", tree.Size(), size)
			}
			alloc := m1.TotalAlloc - m0.TotalAlloc
			t.Logf("a fetch from %s of a %d MiB skill allocated %.2f MiB", from, size>>20, float64(alloc)/(1<<20))
			if alloc > bound {
				t.Errorf("a fetch from %s of a %d MiB skill allocated %.1f MiB, want at most %d MiB whatever the size",
					from, size>>20, float64(alloc)/(1<<20), bound>>20)
			}
		}
	}
}

// writeRandomSkill writes a skill of size bytes of random data in 4 MiB
// files and returns its directory.
func writeRandomSkill(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: big\ndescription: Big.\n---\nBig.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 4<<20)
	for i := range size / len(data) {
		_, _ = rand.Read(data)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("data-%02d.bin", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestFetch_CacheChangedAfterTheFetchIsNotServed: a fetched tree reads its
// files from the cache; a cached layer changed afterwards makes reading a
// file fail instead of returning the changed bytes, and the next fetch
// refetches the layer, after which the tree reads the verified bytes again.
func TestFetch_CacheChangedAfterTheFetchIsNotServed(t *testing.T) {
	reg := newTestRegistry(t)
	source := reg.pushFixture(t, "pdf")
	cache := t.TempDir()
	f := New(Options{CacheDir: cache})
	tree, err := f.Fetch(context.Background(), source)
	if err != nil {
		t.Fatal(err)
	}
	file, ok := tree.File("reference.md")
	if !ok || file.Stored == nil {
		t.Fatalf("reference.md is not stored in the cache: %+v", file)
	}
	want, err := file.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	blobs, _ := filepath.Glob(filepath.Join(cache, "blobs", "sha256", "*"))
	for _, b := range blobs {
		content, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b, bytes.ReplaceAll(content, want[:16], bytes.Repeat([]byte("X"), 16)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := file.Bytes(); !errors.Is(err, skillpack.ErrStoredChanged) {
		t.Fatalf("read from a changed cache: %d bytes, %v; want ErrStoredChanged", len(got), err)
	}
	if _, err := f.Fetch(context.Background(), source); err != nil {
		t.Fatal(err)
	}
	if got, err := file.Bytes(); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after the refetch: %d bytes, %v; want the verified %d bytes", len(got), err, len(want))
	}
}

// TestFetch_GitCredentialsFromTheDirComeBeforeTheFlags: for git, a host in
// the credentials directory's git-credentials wins over --git-credentials;
// other hosts keep the flag's; a host in neither gets none.
func TestFetch_GitCredentialsFromTheDirComeBeforeTheFlags(t *testing.T) {
	creds := t.TempDir()
	if err := os.WriteFile(filepath.Join(creds, CredentialsGit), []byte("https://dir:tok@git.example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flagFile := testenv.TempFile(t, "git-credentials", []byte("https://flag:x@git.example.com\nhttps://flag:y@other.example.com\n"), 0o600)
	flag, err := LoadGitCredentials(flagFile)
	if err != nil {
		t.Fatal(err)
	}
	git, err := New(Options{CacheDir: t.TempDir(), GitAuth: flag, CredentialsDir: creds}).gitCredentials()
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{"git.example.com": "dir", "other.example.com": "flag", "third.example.com": ""} {
		got := ""
		if a, ok := git.auth(host); ok {
			got = a.Username
		}
		if got != want {
			t.Errorf("%s: user %q, want %q (empty: none)", host, got, want)
		}
	}
}
