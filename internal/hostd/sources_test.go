package hostd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/skillsources"
	"github.com/loadout-dev/loadout/internal/sources"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// keptSources is what `loadout hostd` hands hostd for external skills
// (agentcmd wires internal/skillsources the same way), over opts.
func keptSources(opts skillsources.Options) func(SourceHooks) SkillSources {
	return func(h SourceHooks) SkillSources {
		opts.Lock, opts.Logger, opts.Failed, opts.Arrived = h.Lock, h.Logger, h.Failed, h.Arrived
		return skillsources.New(opts)
	}
}

// cachedSources keeps external skills fetched into a cache of the test's.
func cachedSources(t testing.TB) func(SourceHooks) SkillSources {
	t.Helper()
	return keptSources(skillsources.Options{Fetcher: sources.New(sources.Options{CacheDir: t.TempDir()}).Fetcher})
}

// pushSkill packs tree and pushes it as skills/name to an in-process
// registry serving until the test ends; it returns the pinned reference.
func pushSkill(t testing.TB, name string, tree skillpack.Tree) string {
	t.Helper()
	return packtest.Push(t, tree, testnet.Registry(t)+"/skills/"+name)
}

// externalSkillContext is a context holding the skill name, described as
// description, fetched from source, or no skill when source is nil.
func externalSkillContext(t testing.TB, name, description string, source *contract.SkillSource) map[string]string {
	t.Helper()
	return externalSkillContextIn(t, contract.Registry{}, name, description, source)
}

// externalSkillContextIn is externalSkillContext with registry reg (its
// policy: signer requirements, hooks).
func externalSkillContextIn(t testing.TB, reg contract.Registry, name, description string, source *contract.SkillSource) map[string]string {
	t.Helper()
	root := resources.Root{Name: "p"}
	if source != nil {
		root.Skills = []resources.Skill{{Name: name, Description: description, Source: source,
			Origin: resources.Origin{Root: "p", Namespace: "p", Object: name}}}
	}
	res, err := resources.Render(resources.Input{Roots: []resources.Root{root}, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return res.Data
}

// writeExternalContext writes the context of the external skill pdf pinned
// at reference into dir.
func writeExternalContext(t *testing.T, dir, reference string) {
	t.Helper()
	resourcestest.WriteTree(t, dir, externalSkillContext(t, "pdf", "Reads PDFs.",
		&contract.SkillSource{OCI: &contract.OCISource{Reference: reference}}))
}

// TestReload_FailingSkillSourceKeepsLastGoodTreeAndIsReported: a context
// whose external skill points at a digest the registry does not hold is
// served (its policy applies at once); the skill keeps its previous version
// in the materialized tree, and /readyz names the failing source.
func TestReload_FailingSkillSourceKeepsLastGoodTreeAndIsReported(t *testing.T) {
	ref := pushSkill(t, "pdf", skillpack.Tree{{Path: "SKILL.md", Mode: skillpack.ModeFile, Content: []byte("---\nname: pdf\ndescription: Reads PDFs.\n---\nGOOD-BODY\n")}})
	ctxDir, out := t.TempDir(), filepath.Join(t.TempDir(), "tree")
	writeExternalContext(t, ctxDir, ref)
	s := New(Options{ContextDir: ctxDir, MaterializeDir: out, SkillSources: cachedSources(t), Logger: quietLogger()})
	t.Cleanup(s.wait)
	if err := s.Reload(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	s.wait()
	wrong := ref[:len(ref)-64] + strings.Repeat("0", 64)
	writeExternalContext(t, ctxDir, wrong)
	if err := s.Reload(context.Background(), true); err != nil {
		t.Fatalf("a context whose source fails was not served: %v", err)
	}
	s.wait()
	b, err := os.ReadFile(filepath.Join(out, "skills", "pdf", "SKILL.md"))
	if err != nil || !strings.Contains(string(b), "GOOD-BODY") {
		t.Fatalf("last good version lost: %q, %v", b, err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/readyz", nil))
	for _, want := range []string{`"failingSkillSources":"1"`, wrong, `"state":"failing"`, `"serving":"previous version"`, `"skill":"pdf"`} {
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Fatalf("/readyz = %d %s, want 200 with %s", rec.Code, rec.Body, want)
		}
	}
}

// A hostd given no SkillSources (hostd.New without the wiring `loadout
// hostd` does) serves the context's policy and its inline content, and names
// each external skill as failing, saying why, rather than pending for ever.
func TestReload_WithoutSkillSourcesAnExternalSkillIsNamedFailing(t *testing.T) {
	ctxDir, out := t.TempDir(), filepath.Join(t.TempDir(), "tree")
	writeExternalContext(t, ctxDir, "127.0.0.1:1/skills/pdf@sha256:"+strings.Repeat("d", 64))
	s := New(Options{ContextDir: ctxDir, MaterializeDir: out, Logger: quietLogger()})
	if err := s.Reload(context.Background(), true); err != nil {
		t.Fatalf("a context with an external skill was not served: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "skills", "pdf")); !os.IsNotExist(err) {
		t.Fatalf("skills/pdf materialized with no source fetched: %v", err)
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/readyz", nil))
	for _, want := range []string{`"failingSkillSources":"1"`, `"state":"failing"`, `"serving":"nothing"`, reasonNoSources} {
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Fatalf("/readyz = %d %s, want 200 with %s", rec.Code, rec.Body, want)
		}
	}
}
