package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/ledger"
)

// isLedger reports whether raw is a decision ledger (or a log holding one):
// a line starting with the record prefix.
func isLedger(raw []byte) bool {
	return bytes.HasPrefix(raw, []byte(ledger.Prefix)) || bytes.Contains(raw, []byte("\n"+ledger.Prefix))
}

// ledgerCalls are the calls and prompts a decision ledger recorded with
// their arguments (an extension's recordArguments): one per BeforeToolCall
// verdict and per prompt event, named by chain and seq, for the Workspace
// that judged it. The other records (after hooks, events without a prompt,
// verdicts recorded with digests only) cannot be replayed: they are counted
// on stderr, never dropped silently.
func ledgerCalls(path string, raw []byte, stderr io.Writer) ([]replayCall, error) {
	var calls []replayCall
	skipped, firstSkipped := 0, ""
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for line := 1; sc.Scan(); line++ {
		l := sc.Bytes()
		if !bytes.HasPrefix(l, []byte(ledger.Prefix)) {
			continue
		}
		var r struct {
			ledger.Record
			Chain string `json:"chain"`
			Seq   uint64 `json:"seq"`
		}
		if err := json.Unmarshal(l, &r); err != nil {
			return nil, fmt.Errorf("%s:%d: a ledger record that is not JSON: %w", path, line, err)
		}
		name := fmt.Sprintf("%s#%d %s", r.Chain, r.Seq, r.Event)
		c := replayCall{Workspace: r.Workspace}
		switch {
		case r.Event == string(vocab.BeforeToolCall) && r.Tool != "" && r.Arguments != nil:
			if err := json.Unmarshal(r.Arguments, &c.Arguments); err != nil {
				return nil, fmt.Errorf("%s:%d: record %s: arguments: %w", path, line, name, err)
			}
			c.Tool, c.Name = r.Tool, name+" "+r.Tool
		case r.Event != string(vocab.BeforeToolCall) && r.Event != string(vocab.AfterToolResult) && r.Prompt != nil:
			c.Event, c.Prompt, c.Name = r.Event, *r.Prompt, name
		default:
			if skipped == 0 {
				firstSkipped = fmt.Sprintf("line %d, %s", line, name)
			}
			skipped++
			continue
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if skipped > 0 {
		_, _ = fmt.Fprintf(stderr, "%s: %d ledger records cannot be replayed (after hooks, events without a prompt, or calls recorded with digests only: no hook of theirs is an extension's with recordArguments), the first at %s\n",
			path, skipped, firstSkipped)
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("%s: no ledger record carries its arguments or prompt to replay (an extension's recordArguments writes them)", path)
	}
	return calls, nil
}
