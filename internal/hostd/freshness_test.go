package hostd

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/skillsources"
	"github.com/loadout-dev/loadout/internal/sources"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// withExternalSkill adds an external skill pinned at reference to a context.
func withExternalSkill(t *testing.T, data map[string]string, name, reference string) map[string]string {
	t.Helper()
	return withSkills(t, data, contract.SkillDoc{Name: name, Description: "Reads PDFs.",
		Source: &contract.SkillSource{OCI: &contract.OCISource{Reference: reference}}})
}

// quickClient fails a request that takes longer than a probe would wait.
var quickClient = &http.Client{Timeout: 2 * time.Second}

func quickGet(t *testing.T, url string) (int, string) {
	t.Helper()
	return testnet.GetWith(t, quickClient, url)
}

// beforeAllowed asks the real listener whether a call of tool may run.
func beforeAllowed(t *testing.T, base, tool string) bool {
	t.Helper()
	body := `{"call":{"id":"f1","name":"` + tool + `","arguments":{"text":"x"}}}`
	var out BeforeResponse
	testnet.PostJSONWith(t, quickClient, base+"/v1/before", body, &out)
	return out.Allowed
}

// reloadWithin runs Reload and fails the test if it does not return in
// time: a reload must never wait on a skill source.
func reloadWithin(t *testing.T, s *Server, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Reload(context.Background(), false) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
	case <-time.After(d):
		t.Fatalf("reload still running after %s: it waits on the skill source", d)
	}
}

// A source that accepts and never answers must delay neither a new deny
// list nor /readyz: the context's policy applies at once, the source is
// named in /readyz (fetching, then failing with a short reason) and in the
// metrics, and a later context applies at once too while the source is
// being tried again.
func TestReload_HungSourceDelaysNeitherPolicyNorReadyz(t *testing.T) {
	hung := testnet.Hung(t) + "/skills/pdf@sha256:" + strings.Repeat("a", 64)
	dir := t.TempDir()
	resourcestest.WriteConfigMapDir(t, dir, contextData(t, fixedRegistry()))
	s := New(Options{ContextDir: dir, Logger: quietLogger(), SkillSources: keptSources(skillsources.Options{
		Fetcher: sources.New(sources.Options{CacheDir: t.TempDir()}).Fetcher, Timeout: 700 * time.Millisecond, Retry: 50 * time.Millisecond})})
	t.Cleanup(s.wait)
	api, probes := loadAndServe(t, s)
	if !beforeAllowed(t, api.URL, "review_note") {
		t.Fatal("review_note blocked before the deny list names it")
	}

	// The platform denies review_note in the same update that adds a skill
	// whose registry hangs.
	reg := fixedRegistry()
	reg.Deny = append(reg.Deny, "review_note")
	resourcestest.WriteConfigMapDir(t, dir, withExternalSkill(t, contextData(t, reg), "pdf", hung))
	reloadWithin(t, s, time.Second)
	if beforeAllowed(t, api.URL, "review_note") {
		t.Fatal("the new deny list waits on the skill source")
	}
	code, ready := quickGet(t, probes.URL+"/readyz")
	if code != http.StatusOK || !strings.Contains(ready, `"skill":"pdf"`) || !strings.Contains(ready, `"state":"fetching"`) {
		t.Fatalf("/readyz while fetching = %d %s", code, ready)
	}

	// Past the fetch deadline the source is failing, with a short reason.
	waitFor(t, func() bool {
		_, ready = quickGet(t, probes.URL+"/readyz")
		return strings.Contains(ready, `"state":"failing"`)
	})
	if !strings.Contains(ready, `"reason":"no answer within the fetch deadline"`) || !strings.Contains(ready, `"failingSkillSources":"1"`) {
		t.Fatalf("/readyz after the deadline = %s", ready)
	}
	if _, m := quickGet(t, probes.URL+"/metrics"); !strings.Contains(m, `loadout_hostd_skill_source_failing{reason="no answer within the fetch deadline",skill="pdf"} 1`) {
		t.Fatalf("metrics do not name the failing source:\n%s", grepLines(m, "skill_source"))
	}

	// The source is retried (and hangs again) while the next update lands:
	// that update applies at once as well.
	time.Sleep(100 * time.Millisecond)
	reg.Deny = append(reg.Deny, "edit")
	resourcestest.WriteConfigMapDir(t, dir, withExternalSkill(t, contextData(t, reg), "pdf", hung))
	reloadWithin(t, s, time.Second)
	if beforeAllowed(t, api.URL, "edit") {
		t.Fatal("a later deny list waits on the skill source being retried")
	}
	if code, _ := quickGet(t, probes.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz = %d while only a skill source fails", code)
	}
}

// A source's error answer may carry anything (reflected SSRF through the
// unauthenticated probe port): /readyz and the metrics name the failing
// source and the status code, never the body.
func TestReadyz_NamesAFailingSourceButNeverItsBody(t *testing.T) {
	const marker = "REMOTE-BODY-MARKER-c4d1"
	remote := testnet.Serve(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, marker+` {"AccessKeyId":"`+marker+`"}`)
	})
	dir := t.TempDir()
	ref := strings.TrimPrefix(remote.URL, "http://") + "/skills/pdf@sha256:" + strings.Repeat("b", 64)
	resourcestest.WriteConfigMapDir(t, dir, withExternalSkill(t, contextData(t, fixedRegistry()), "pdf", ref))
	s := New(Options{ContextDir: dir, Logger: quietLogger(), SkillSources: cachedSources(t)})
	t.Cleanup(s.wait)
	_ = s.Reload(context.Background(), true)
	s.wait()
	_ = s.Reload(context.Background(), false)
	probes := testnet.ServeHandler(t, s.ProbeHandler())

	_, ready := quickGet(t, probes.URL+"/readyz")
	_, metrics := quickGet(t, probes.URL+"/metrics")
	for name, body := range map[string]string{"/readyz": ready, "/metrics": metrics} {
		if strings.Contains(body, marker) {
			t.Errorf("%s reflects the source's answer:\n%s", name, grepLines(body, marker))
		}
	}
	if !strings.Contains(ready, `"skill":"pdf"`) || !strings.Contains(ready, "registry answered HTTP 403") {
		t.Errorf("/readyz does not name the failing source and why: %s", ready)
	}
	if !strings.Contains(metrics, `loadout_hostd_skill_source_failing{reason="registry answered HTTP 403",skill="pdf"} 1`) {
		t.Errorf("metrics do not name the failing source:\n%s", grepLines(metrics, "skill_source"))
	}
}

// In the Claude Code layout OUT is writable by the agent. Tampering with
// materialize's names must not freeze policy: the next context's deny list
// applies, the tree recovers where it can, and where it cannot (a real
// directory on skills) /readyz answers 503 with the reason while the new
// policy still applies; once the obstacle is moved away the next poll
// recovers.
func TestReload_TamperedTreeCannotFreezePolicy(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	policy := contract.Registry{Deny: []string{"bash"}}
	resourcestest.WriteConfigMapDir(t, dir, contextData(t, policy))
	s := New(Options{ContextDir: dir, MaterializeDir: out, Logger: quietLogger()})
	api, probes := loadAndServe(t, s)

	// The agent plants a directory on the temporary data link and points
	// the skills link outside OUT.
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "..data_tmp", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(out, "skills")); err != nil {
		t.Fatal(err)
	}
	resourcestest.Symlink(t, outside, filepath.Join(out, "skills"))
	policy.Deny = append(policy.Deny, "edit")
	update := withSkills(t, contextData(t, policy), contract.SkillDoc{Name: "deploy", Description: "Deploy", Body: "Deploy body"})
	resourcestest.WriteConfigMapDir(t, dir, update)
	if err := s.Reload(context.Background(), false); err != nil {
		t.Fatalf("reload after tampering: %v", err)
	}
	if beforeAllowed(t, api.URL, "edit") {
		t.Fatal("the new deny list did not apply")
	}
	if b, err := os.ReadFile(filepath.Join(out, "skills", "deploy", "SKILL.md")); err != nil || !strings.HasSuffix(string(b), "Deploy body") {
		t.Fatalf("the tree did not recover: %q, %v", b, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("the writer followed the planted link: %v", entries)
	}
	if code, ready := quickGet(t, probes.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz = %d %s after a recovered tree", code, ready)
	}

	// A real directory on skills cannot be fixed without deleting it.
	if err := os.Remove(filepath.Join(out, "skills")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(out, "skills", "agent-made"), 0o755); err != nil {
		t.Fatal(err)
	}
	policy.Deny = append(policy.Deny, "write")
	resourcestest.WriteConfigMapDir(t, dir, contextData(t, policy))
	if err := s.Reload(context.Background(), false); err == nil {
		t.Fatal("a tree that could not be written was not reported")
	}
	if beforeAllowed(t, api.URL, "write") {
		t.Fatal("a tree that cannot be written kept the old policy")
	}
	code, ready := quickGet(t, probes.URL+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(ready, "skills exists and is not the link") || !strings.Contains(ready, servedHash(s)) {
		t.Fatalf("/readyz = %d %s, want 503 naming skills and the served hash", code, ready)
	}
	if _, m := quickGet(t, probes.URL+"/metrics"); !strings.Contains(m, "loadout_hostd_tree_current 0") {
		t.Fatalf("metrics: %s", grepLines(m, "tree"))
	}

	// The agent moves its directory away: the next poll recovers.
	if err := os.RemoveAll(filepath.Join(out, "skills")); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background(), false); err != nil {
		t.Fatalf("poll after the obstacle left: %v", err)
	}
	if code, ready := quickGet(t, probes.URL+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz = %d %s after recovery", code, ready)
	}
}
