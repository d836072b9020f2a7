package hostd

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/skillfile"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/sourcecache"
)

// TestSidecar_FetchesExternalSkillsThroughItsHelper runs the sidecar as the
// image ships it (loadout-hostd with loadout-fetch beside it, both built
// here): an external skill pinned in a registry is fetched by the helper
// and materialized. With a helper that never answers (--fetch-helper), the
// fetch is killed at --source-timeout and /readyz names the source failing
// with the deadline's reason, while hostd serves on.
func TestSidecar_FetchesExternalSkillsThroughItsHelper(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sidecar and its helper")
	}
	bin := hostdBinary(t)
	md := "---\nname: pdf\ndescription: Reads PDFs.\n---\nFetched by the helper.\n"
	ref := pushSkill(t, "pdf", skillpack.Tree{skillfile.New("SKILL.md", []byte(md), skillfile.ModeFile)})
	data := externalSkillContext(t, "pdf", "Reads PDFs.", &contract.SkillSource{OCI: &contract.OCISource{Reference: ref}})

	dir, out := t.TempDir(), t.TempDir()
	resourcestest.WriteConfigMapDir(t, dir, data)
	startHostdOn(t, bin, "GOMEMLIMIT=off", dir, "--materialize", out, "--source-cache", t.TempDir(), "--poll-interval", "100ms")
	skill := filepath.Join(out, "skills", "pdf", "SKILL.md")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if got, err := os.ReadFile(skill); err == nil && strings.Contains(string(got), "Fetched by the helper.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the external skill was not materialized through the helper")
		}
	}

	hung := filepath.Join(t.TempDir(), "hung-helper")
	if err := os.WriteFile(hung, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	resourcestest.WriteConfigMapDir(t, dir, data)
	base, _ := startHostdOn(t, bin, "GOMEMLIMIT=off", dir, "--source-cache", t.TempDir(), "--fetch-helper", hung, "--source-timeout", "500ms")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), sourcecache.ReasonDeadline) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never named the hung helper's source: %s", body)
		}
	}
}
