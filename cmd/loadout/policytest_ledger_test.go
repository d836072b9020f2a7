package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/ledger"
)

// recordingGuard opts the samples' platform guard into recordArguments.
func recordingGuard(g string) string {
	return strings.Replace(g, "spec:\n", "spec:\n  recordArguments: true\n", 1)
}

// ledgerOf runs hostd on the context manifests publish, with its ledger in
// a file, asks it about each shell command, and returns the file.
func ledgerOf(t *testing.T, manifests string, commands ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hostd.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	url := serveHostd(t, hostd.Options{ContextDir: previewDir(t, "-f", manifests), Ledger: ledger.NewWriter(f)})
	for i, c := range commands {
		askBash(t, url, "c"+strconv.Itoa(i), c)
	}
	return path
}

// A ledger recorded with an extension's recordArguments replays as CALLS: a
// head that weakens the guard fails naming the recorded call; an unchanged
// head prints nothing.
func TestPolicyTest_ReplaysALedgerRecordedWithArguments(t *testing.T) {
	base := copySamples(t, recordingGuard)
	led := ledgerOf(t, base, "ls", "rm -rf build")
	raw, err := os.ReadFile(led)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"arguments":{"command":"rm -rf build"}`) {
		t.Fatalf("the ledger does not carry the arguments:\n%s", raw)
	}
	head := copySamples(t, func(g string) string { return strings.Replace(recordingGuard(g), rmRule, "", 1) })
	out, _, err := run(t, "test", "--base", base, "--head", head, led)
	if err == nil || !strings.Contains(err.Error(), "weakens a guard") || !strings.Contains(err.Error(), "#2 BeforeToolCall bash in team-a/dev") {
		t.Fatalf("err %v\n%s", err, out)
	}
	if !strings.Contains(out, "blocked (platform-guard/no-recursive-delete)") || strings.Contains(out, "#1 ") {
		t.Errorf("table:\n%s", out)
	}
	out, stderr, err := run(t, "test", "--base", base, "--head", copySamples(t, recordingGuard), led, "--fail-on-change")
	if err != nil || out != "" || !strings.HasPrefix(stderr, "loadout test: passed: 2 calls judged") {
		t.Fatalf("unchanged head: err %v, stdout %q, stderr %q", err, out, stderr)
	}
}

// A ledger recorded without recordArguments holds digests only: nothing to
// replay, said with the way to get them.
func TestPolicyTest_LedgerWithDigestsOnlyIsRefusedNamingRecordArguments(t *testing.T) {
	led := ledgerOf(t, samplesDir, "ls")
	_, _, err := run(t, "test", "--base", samplesDir, "--head", samplesDir, led)
	if err == nil || !strings.Contains(err.Error(), "no ledger record carries its arguments") || !strings.Contains(err.Error(), "recordArguments") {
		t.Fatalf("err %v", err)
	}
}
