package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

// A real Claude Code session through hostd leaves one ledger record per
// verdict in hostd's log, each hook that ran in it with its outcome; an
// in-process OTLP receiver gets the very same record lines and one span per
// tool call with a child span per hook; `loadout audit verify` passes the
// ledger and names a deleted and an edited record (docs/hostd.md, "Decision
// ledger").
func TestClaudeCode_LedgerHasOneRecordPerVerdictAndOTLPGetsTheSame(t *testing.T) {
	otlp := agenttest.StartOTLP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.URL)
	t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	a := NewAgent(t, HTTPHook,
		Turn{Text: "cleaning", Tools: []ToolUse{{ID: "toolu_rm", Name: "Bash", Input: map[string]any{"command": "rm -rf build", "description": "remove build"}}}},
		Turn{Text: "listing", Tools: []ToolUse{{ID: "toolu_ls", Name: "Bash", Input: map[string]any{"command": "ls", "description": "list"}}}},
		Turn{Tools: []ToolUse{{ID: "toolu_note", Name: "mcp__loadout__review_note", Input: map[string]any{"text": "parser.go:42 drops an error"}}}},
	)
	a.Run(t, "clean up, list, and note")
	a.Hostd.Stop() // flushes the exporter

	var lines []string
	for _, l := range strings.Split(a.Hostd.Log(), "\n") {
		if strings.HasPrefix(l, ledger.Prefix) {
			lines = append(lines, l)
		}
	}
	type record struct {
		ledger.Record
		Seq uint64 `json:"seq"`
	}
	var recs []record
	for _, l := range lines {
		var r record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	// One BeforeToolCall verdict per call: Claude Code's hook for Bash, and
	// hostd's own run of the MCP tool.
	verdicts := map[string]string{}
	for _, r := range recs {
		if r.Event == "BeforeToolCall" {
			if _, dup := verdicts[r.CallID]; dup {
				t.Errorf("two verdicts for call %s", r.CallID)
			}
			verdicts[r.CallID] = r.Verdict
			if len(r.Hooks) == 0 && r.Reason != "deniedTool" {
				t.Errorf("record %d lists no hooks: %+v", r.Seq, r.Record)
			}
		}
	}
	if verdicts["toolu_rm"] != "blocked" || verdicts["toolu_ls"] != "allowed" {
		t.Errorf("verdicts = %v, want toolu_rm blocked, toolu_ls allowed", verdicts)
	}
	guard := func(r record) bool {
		return slices.ContainsFunc(r.Hooks, func(h ledger.Hook) bool { return h.Hook == "no-recursive-delete" })
	}
	for _, r := range recs {
		if r.CallID == "toolu_ls" && r.Event == "BeforeToolCall" && (!guard(r) || r.Hooks[slices.IndexFunc(r.Hooks, func(h ledger.Hook) bool { return h.Hook == "no-recursive-delete" })].Outcome != "allowed") {
			t.Errorf("ls: the guard's run is not recorded as allowed: %+v", r.Hooks)
		}
		if r.CallID == "toolu_rm" && r.Event == "BeforeToolCall" && !guard(r) {
			t.Errorf("rm: the guard's run is not recorded: %+v", r.Hooks)
		}
	}

	// The receiver got the same lines, and a span per tool call with its
	// hooks as children.
	// hostd also exports its signed chain heads (anchors) as logs, at times
	// of its own (start, every few seconds, shutdown): the records must be
	// the ledger's lines exactly, and every anchor one hostd wrote.
	testenv.Eventually(t, 10*time.Second, func() error {
		var got []string
		for _, l := range otlp.Logs() {
			switch {
			case strings.HasPrefix(l, ledger.AnchorPrefix):
				if !strings.Contains(a.Hostd.Log(), l) {
					return errorf("OTLP log %.80s… is an anchor hostd never wrote", l)
				}
			default:
				got = append(got, l)
			}
		}
		if !slices.Equal(got, lines) {
			return errorf("OTLP records (%d) are not the ledger's %d lines", len(got), len(lines))
		}
		return nil
	})
	spans := otlp.Spans()
	t.Logf("%d ledger records, %d OTLP logs, %d spans", len(recs), len(otlp.Logs()), len(spans))
	for _, r := range recs {
		if r.Tool == "" {
			continue
		}
		root := slices.IndexFunc(spans, func(s agenttest.Span) bool {
			return s.Parent == "" && s.Name == r.Event+" "+r.Tool && s.Attributes["gen_ai.tool.call.id"] == r.CallID && s.Attributes["loadout.verdict"] == r.Verdict
		})
		if root < 0 {
			t.Errorf("no span for record %d (%s %s %s)", r.Seq, r.Event, r.Tool, r.CallID)
			continue
		}
		children := 0
		for _, s := range spans {
			if s.Parent == spans[root].Name && strings.HasPrefix(s.Name, "hook ") {
				children++
			}
		}
		if children < len(r.Hooks) {
			t.Errorf("span %s has %d hook spans, the record %d hooks", spans[root].Name, children, len(r.Hooks))
		}
	}

	// audit verify: whole, then a deleted and an edited record.
	dir := t.TempDir()
	whole := strings.Join(lines, "\n") + "\n"
	verify := func(name, content string) (string, error) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(agenttest.Loadout(t), "audit", "verify", path).CombinedOutput()
		return string(out), err
	}
	if out, err := verify("whole", whole); err != nil {
		t.Fatalf("audit verify on the session's ledger: %v\n%s", err, out)
	}
	if len(lines) < 3 {
		t.Fatalf("%d records", len(lines))
	}
	deleted := slices.Delete(slices.Clone(lines), 1, 2)
	out, err := verify("deleted", strings.Join(deleted, "\n")+"\n")
	if err == nil || !strings.Contains(out, "gap") || !strings.Contains(out, "line 2") {
		t.Errorf("a deleted record: %v\n%s", err, out)
	}
	edited := slices.Clone(lines)
	edited[1] = strings.Replace(edited[1], `"verdict":"`, `"verdict":"x`, 1)
	out, err = verify("edited", strings.Join(edited, "\n")+"\n")
	if err == nil || !strings.Contains(out, "edited") || !strings.Contains(out, "line 2") {
		t.Errorf("an edited record: %v\n%s", err, out)
	}
	if _, brk, err := ledger.Verify(bytes.NewReader([]byte(whole))); brk != nil || err != nil {
		t.Errorf("ledger.Verify: %v %v", brk, err)
	}
}

func errorf(format string, args ...any) error {
	return fmt.Errorf(format, args...)
}
