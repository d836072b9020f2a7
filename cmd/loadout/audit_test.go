package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/ledger/ledgertest"
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
	// hostd's anchors are lines of the same file (the chain's key at seq 0
	// first); Verify skips them.
	if all := ledgertest.Lines(string(raw)); !strings.HasPrefix(all[0], ledger.AnchorPrefix) {
		t.Fatalf("the ledger does not start with its chain's anchor:\n%s", raw)
	}
	lines := ledgertest.Records(ledgertest.Lines(string(raw)))
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

// A real hostd signs its heads (--ledger-anchor-interval): against its
// anchors, `audit verify --anchors` names each forgery in a
// copy of the ledger, none of which the file alone shows: a record
// rewritten with the chain recomputed, the chain deleted, a chain of the
// forger's appended, the tail cut.
func TestAuditVerify_AnchorsNameEachForgeryOfARealHostdLedger(t *testing.T) {
	ledgerFile := filepath.Join(t.TempDir(), "hostd.log")
	addr := testnet.FreeAddr(t)
	startCommand(t, "hostd", "--allow-unsigned-context", "--context-dir", mountSamples(t), "--addr", addr, "--ledger-file", ledgerFile,
		"--ledger-anchor-interval", "50ms")
	testnet.WaitStatus(t, "http://"+addr+"/readyz", http.StatusOK)
	for _, body := range []string{
		`{"call":{"id":"1","name":"bash","arguments":{"command":"ls -la"}}}`,
		`{"call":{"id":"2","name":"bash","arguments":{"command":"rm -rf build"}}}`,
		`{"call":{"id":"3","name":"bash","arguments":{"command":"git status"}}}`,
	} {
		testnet.PostJSON(t, "http://"+addr+"/v1/before", body, nil)
	}
	var raw []byte
	testenv.Eventually(t, 10*time.Second, func() error {
		var err error
		if raw, err = os.ReadFile(ledgerFile); err != nil {
			return err
		}
		if !strings.Contains(string(raw), `"seq":3,"head":"sha256:`) {
			return fmt.Errorf("no anchor of seq 3 yet:\n%s", raw)
		}
		return nil
	})
	all := ledgertest.Lines(string(raw))
	var anchors []string
	for _, l := range all {
		if strings.HasPrefix(l, ledger.AnchorPrefix) {
			anchors = append(anchors, l)
		}
	}
	anchorsFile := testenv.TempFile(t, "anchors.jsonl", []byte(strings.Join(anchors, "")), 0o644)
	records := ledgertest.Records(all)
	out, _, err := run(t, "audit", "verify", "--anchors", anchorsFile, write(t, string(raw)))
	if err != nil || !strings.Contains(out, "whole and anchored: 3 records in 1 chains") {
		t.Fatalf("the whole ledger: %v %q", err, out)
	}

	rewritten := append([]string{}, records...)
	rewritten[1] = strings.Replace(rewritten[1], `"verdict":"blocked"`, `"verdict":"allowed"`, 1)
	rewritten = ledgertest.Rechain(rewritten)
	var forged bytes.Buffer
	fw := ledger.NewWriter(&forged)
	fw.Write(&ledger.Record{Surface: "before", Event: "BeforeToolCall", Tool: "bash", Verdict: "allowed"})
	chain := ledgertest.Chain(records[0])
	for name, tc := range map[string]struct {
		ledger []string
		want   string
	}{
		"rewritten": {rewritten, "record 2 rewritten"},
		"deleted":   {[]string{`{"msg":"nothing to see"}` + "\n"}, "chain " + chain + " deleted (anchored head missing)"},
		"appended":  {append(append([]string{}, records...), forged.String()), "chain " + fw.Chain() + " not anchored (appended)"},
		"cut":       {records[:2], "tail cut after 2 (anchor says 3)"},
	} {
		t.Run(name, func(t *testing.T) {
			file := write(t, strings.Join(tc.ledger, ""))
			if name != "deleted" {
				if _, _, err := run(t, "audit", "verify", file); err != nil {
					t.Fatalf("without anchors the forgery passes, want it to (that is the attack): %v", err)
				}
			}
			_, _, err := run(t, "audit", "verify", "--anchors", anchorsFile, file)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}
