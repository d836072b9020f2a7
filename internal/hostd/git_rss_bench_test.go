package hostd

import (
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// bigDataBytes is the data beside the pinned skill: 10 files of 15 MiB of
// random bytes in the same repository.
const bigDataBytes = 150 << 20

// gitLayout is where a benchmark repository keeps its 150 MiB, and whether
// its server serves a commit by its id.
type gitLayout struct {
	name string
	// sameCommit puts the data in the pinned commit, outside the skill's
	// path; otherwise it is on another branch.
	sameCommit bool
	// noSHAInWant serves no commit by its id (uploadpack's
	// allowReachableSHA1InWant off), so the fetch falls back to a clone.
	noSHAInWant bool
}

// BenchmarkHostd_PeakRSS_4ByteGitSkillBeside150MiB starts a real `loadout
// hostd` with --materialize, reads its peak resident memory (VmHWM) idle,
// then in each round publishes a context with one external skill whose
// SKILL.md body is 4 bytes, pinned by commit in a git repository that holds
// 150 MiB besides, waits until it is materialized, and publishes the first
// context again. The repository is served over HTTPS by git's own smart-HTTP
// backend. Layouts: the data on another branch, with
// uploadpack.allowReachableSHA1InWant as GitHub serves commits by id; the
// data in the pinned commit itself, outside the skill's path; and the data
// on another branch of a server that serves no commit by id (a full clone).
// The target (docs/benchmarks.md) is at most 32 MiB above idle in each.
func BenchmarkHostd_PeakRSS_4ByteGitSkillBeside150MiB(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc (Linux) to read peak RSS")
	}
	bin := hostdBinary(b)
	for _, layout := range []gitLayout{
		{name: "other-branch"},
		{name: "same-commit", sameCommit: true},
		{name: "no-sha-in-want", noSHAInWant: true},
	} {
		b.Run(layout.name, func(b *testing.B) {
			url, commit := serveGitRepository(b, layout)
			source := &contract.SkillSource{Git: &contract.GitSource{URL: url, Commit: commit, Path: "skills/tiny"}}
			b.Run("sample-128Mi-limit", func(b *testing.B) { peakRSSServingGitSkill(b, bin, "GOMEMLIMIT=107374182", source) })
			b.Run("no-limit", func(b *testing.B) { peakRSSServingGitSkill(b, bin, "GOMEMLIMIT=off", source) })
		})
	}
}

func peakRSSServingGitSkill(b *testing.B, bin, env string, source *contract.SkillSource) {
	b.Helper()
	peakRSSServingExternalSkill(b, bin, env, externalSkillContext(b, "tiny", "A tiny skill.", nil), externalSkillContext(b, "tiny", "A tiny skill.", source), 32<<20,
		func(out string) bool {
			body, err := os.ReadFile(filepath.Join(out, "skills", "tiny", "SKILL.md"))
			return err == nil && strings.HasSuffix(string(body), "\nTiny")
		}, filepath.Join("skills", "tiny"))
}

// serveGitRepository creates the repository (the skill on main, 150 MiB of
// random files where layout says), serves it over HTTPS for the benchmark's
// life, points this process's and hostd's trust at the server's certificate
// (SSL_CERT_FILE) and returns its URL and the skill's commit.
func serveGitRepository(b *testing.B, layout gitLayout) (url, commit string) {
	b.Helper()
	root := b.TempDir()
	repo := filepath.Join(root, "skills.git")
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com",
			"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name string, data []byte) {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	writeData := func() {
		const files = 10
		for i := range files {
			data := make([]byte, bigDataBytes/files)
			_, _ = rand.Read(data)
			write(fmt.Sprintf("data/blob-%d.bin", i), data)
		}
	}
	run("init", "-q", "-b", "main")
	write("skills/tiny/SKILL.md", []byte("---\nname: tiny\ndescription: A tiny skill.\n---\nTiny"))
	if layout.sameCommit {
		writeData()
	}
	run("add", ".")
	run("commit", "-q", "-m", "tiny skill")
	commit = run("rev-parse", "HEAD")
	if !layout.sameCommit {
		run("checkout", "-q", "-b", "big")
		writeData()
		run("add", ".")
		run("commit", "-q", "-m", "150 MiB beside the skill")
		run("checkout", "-q", "main")
	}
	run("config", "uploadpack.allowReachableSHA1InWant", fmt.Sprint(!layout.noSHAInWant))

	srv := testnet.GitServer(b, root, true)
	certFile := filepath.Join(root, "ca.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Setenv("SSL_CERT_FILE", certFile) // inherited by hostd
	return srv.URL + "/skills.git/.git", commit
}
