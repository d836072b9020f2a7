package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copySamples copies config/samples to a directory of its own, applying
// edit (if any) to the guard's manifest.
func copySamples(t *testing.T, edit func(guard string) string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(samplesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() { // config/samples/content-rules: not part of the samples' Workspace
			continue
		}
		b, err := os.ReadFile(filepath.Join(samplesDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "platform_extension_guard.yaml" && edit != nil {
			edited := edit(string(b))
			if edited == string(b) {
				t.Fatal("the edit changed nothing")
			}
			b = []byte(edited)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

const rmRule = "          || (c.name in ['rm', 'grm', 'srm', 'wipe'] && (c.hasFlag('r', 'R', 'recursive') || c.via != ''))\n"

var calls = filepath.Join("testdata", "policytest", "calls.yaml")

func TestPolicyTest_WeakenedGuardFailsNamingTheCall(t *testing.T) {
	head := copySamples(t, func(g string) string { return strings.Replace(g, rmRule, "", 1) })
	out, _, err := run(t, "test", "--base", "../../config/samples", "--head", head, calls)
	if err == nil || !strings.Contains(err.Error(), "weakens a guard") || !strings.Contains(err.Error(), "recursive delete in team-a/dev") {
		t.Fatalf("err %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "recursive delete") || !strings.Contains(lines[1], "blocked (platform-guard/no-recursive-delete)") ||
		!strings.HasSuffix(lines[1], "WEAKENED") {
		t.Fatalf("table:\n%s", out)
	}

	out, _, _ = run(t, "test", "--base", "../../config/samples", "--head", head, calls, "-o", "json")
	var got struct{ Changes []change }
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Changes) != 1 || !got.Changes[0].Weakened ||
		got.Changes[0].Base.Hook != "no-recursive-delete" || got.Changes[0].Head.Verdict != "allowed" {
		t.Fatalf("json %v: %s", err, out)
	}
}

// An unchanged head prints no table, and one line on stderr saying what
// passed.
func TestPolicyTest_UnchangedHeadPrintsOnlyASummary(t *testing.T) {
	head := copySamples(t, nil)
	out, stderr, err := run(t, "test", "--base", "../../config/samples", "--head", head, calls, "--fail-on-change")
	if err != nil || out != "" || !strings.HasPrefix(stderr, "loadout test: passed: ") || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "0 verdicts change") {
		t.Fatalf("err %v, stdout %q, stderr %q; want no table and one summary line", err, out, stderr)
	}
}

func TestPolicyTest_TightenedGuardFailsOnlyOnRequest(t *testing.T) {
	// The head also refuses every ls: a change, not a weakening.
	head := copySamples(t, func(g string) string {
		return strings.Replace(g, rmRule, rmRule+"          || c.name == 'ls'\n", 1)
	})
	out, _, err := run(t, "test", "--base", "../../config/samples", "--head", head, calls)
	if err != nil || !strings.Contains(out, "list files") || !strings.Contains(out, "tightened") {
		t.Fatalf("err %v:\n%s", err, out)
	}
	if _, _, err := run(t, "test", "--base", "../../config/samples", "--head", head, calls, "--fail-on-change"); err == nil ||
		!strings.Contains(err.Error(), "1 verdicts change") {
		t.Fatalf("--fail-on-change: %v", err)
	}
}
