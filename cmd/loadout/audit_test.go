package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// A real hostd's ledger of a few calls verifies; a deleted, an edited and
// two reordered records are each named by line.
func TestAuditVerify_RealHostdLedger(t *testing.T) {
	ledgerFile := filepath.Join(t.TempDir(), "hostd.log")
	addr := testnet.FreeAddr(t)
	startCommand(t, "hostd", "--allow-unsigned-context", "--context-dir", mountSamples(t), "--addr", addr, "--ledger-file", ledgerFile)
	testnet.WaitStatus(t, "http://"+addr+"/readyz", http.StatusOK)
	for _, body := range []string{
		`{"call":{"id":"1","name":"bash","arguments":{"command":"ls -la"}}}`,
		`{"call":{"id":"2","name":"bash","arguments":{"command":"rm -rf build"}}}`,
		`{"call":{"id":"3","name":"review_note","arguments":{"text":"the SECRET"}}}`,
		`{"call":{"id":"4","name":"bash","arguments":{"command":"git status"}}}`,
	} {
		testnet.PostJSON(t, "http://"+addr+"/v1/before", body, nil)
	}
	testnet.PostJSON(t, "http://"+addr+"/v1/events/UserInput", `{"prompt":{"text":"hello"}}`, nil)

	raw, err := os.ReadFile(ledgerFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != 5 || !strings.Contains(lines[1], `"verdict":"blocked"`) || !strings.Contains(lines[1], `"hook":"no-recursive-delete","outcome":"denied"`) ||
		!strings.Contains(lines[4], `"event":"UserInput"`) || strings.Contains(string(raw), "rm -rf") {
		t.Fatalf("ledger:\n%s", raw)
	}
	// In a mixed log, among hostd's other lines.
	mixed := `{"time":"x","level":"INFO","msg":"Context loaded"}` + "\n" + strings.Join(lines, "")
	out, _, err := run(t, "audit", "verify", write(t, mixed))
	if err != nil || !strings.Contains(out, "whole: 5 records in 1 chains") || !strings.Contains(out, "1 other lines skipped") {
		t.Fatalf("whole ledger: %v %q", err, out)
	}

	for name, tc := range map[string]struct {
		edit func([]string) []string
		want string
	}{
		"deleted": {func(l []string) []string { return append(append([]string{}, l[:2]...), l[3:]...) },
			"line 3 (chain "},
		"edited": {func(l []string) []string {
			l = append([]string{}, l...)
			l[1] = strings.Replace(l[1], `"verdict":"blocked"`, `"verdict":"allowed"`, 1)
			return l
		}, "line 2 (chain "},
		"reordered": {func(l []string) []string {
			l = append([]string{}, l...)
			l[2], l[3] = l[3], l[2]
			return l
		}, "line 3 (chain "},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := run(t, "audit", "verify", write(t, strings.Join(tc.edit(lines), "")))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			kind := map[string]string{"deleted": ": gap: ", "edited": ": edited: ", "reordered": ": reorder: "}[name]
			if !strings.Contains(err.Error(), kind) {
				t.Fatalf("err %v, want %q", err, kind)
			}
		})
	}
}

func write(t *testing.T, s string) string {
	t.Helper()
	return testenv.TempFile(t, "ledger.log", []byte(s), 0o644)
}
