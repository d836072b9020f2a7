package ledger

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/ledger/ledgertest"
)

// anchoredChain is what one hostd process writes with anchors on (every
// 2 records, and a checkpoint at shutdown): the ledger's lines (records
// and in-band anchors) and the anchor lines alone, as the collector keeps
// them. Record 3 is blocked, the others allowed.
func anchoredChain(t *testing.T, records int) (w *Writer, lines, anchors []string) {
	t.Helper()
	var buf bytes.Buffer
	w = NewWriter(&buf)
	if err := w.EnableAnchors(2); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= records; i++ {
		verdict := "allowed"
		if i == 3 {
			verdict = "blocked"
		}
		w.Write(&Record{Time: "2026-12-03T06:00:00Z", Surface: "before", Event: "BeforeToolCall", Tool: "bash", Verdict: verdict})
	}
	w.Checkpoint()
	w.Checkpoint() // the head did not move: no second anchor
	for _, l := range ledgertest.Lines(buf.String()) {
		lines = append(lines, l)
		if strings.HasPrefix(l, AnchorPrefix) {
			anchors = append(anchors, l)
		}
	}
	return w, lines, anchors
}

func verifyAnchored(t *testing.T, ledger, anchors []string) AnchoredReport {
	t.Helper()
	rep, err := VerifyAnchored(strings.NewReader(strings.Join(ledger, "")), strings.NewReader(strings.Join(anchors, "")))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestAnchors_WholeLedgerHasNoForgery(t *testing.T) {
	_, lines, anchors := anchoredChain(t, 5)
	// Seq 0 (the key), 2, 4, and the shutdown checkpoint at 5.
	if len(anchors) != 4 {
		t.Fatalf("%d anchors, want 4:\n%s", len(anchors), strings.Join(anchors, ""))
	}
	rep := verifyAnchored(t, lines, anchors)
	if rep.Break != nil || len(rep.Forgeries) != 0 || rep.Summary.Records != 5 || rep.Anchors != 4 || rep.Unanchored != 0 {
		t.Fatalf("report %+v", rep)
	}
	// The ledger's own anchors are enough once the collector's copy holds
	// the chain's first (its key); a record after the last is unanchored.
	w, lines, anchors := anchoredChain(t, 5)
	w.Write(&Record{Verdict: "allowed"})
	rep, err := VerifyAnchored(strings.NewReader(strings.Join(lines, "")), strings.NewReader(anchors[0]))
	if err != nil || len(rep.Forgeries) != 0 || rep.Anchors != 4 {
		t.Fatalf("report %+v, %v", rep, err)
	}
}

// The four forgeries (docs/security.md) pass Verify (the file alone is whole) and
// are each named against the anchors.
func TestAnchors_EachForgeryIsNamed(t *testing.T) {
	_, a, anchorsA := anchoredChain(t, 5)
	wb, b, anchorsB := anchoredChain(t, 3)
	trusted := append(append([]string{}, anchorsA...), anchorsB...)

	// A chain of the forger's own, anchored with a key of its own.
	var forged bytes.Buffer
	fw := NewWriter(&forged)
	if err := fw.EnableAnchors(1); err != nil {
		t.Fatal(err)
	}
	fw.Write(&Record{Verdict: "allowed", Tool: "bash"})
	fw.Checkpoint()

	rewrite := ledgertest.Records(a)
	rewrite[2] = strings.Replace(rewrite[2], `"verdict":"blocked"`, `"verdict":"allowed"`, 1)
	rewrite = ledgertest.Rechain(rewrite)

	for name, tc := range map[string]struct {
		ledger []string
		kind   string
		want   string
	}{
		"a record rewritten and the chain recomputed": {append(rewrite, ledgertest.Records(b)...), "rewritten", "record 3 rewritten"},
		"a whole chain deleted":                       {ledgertest.Records(a), "deleted", "chain " + wb.Chain() + " deleted (anchored head missing)"},
		"a forged chain appended (with anchors of its own key)": {append(append(ledgertest.Records(a), ledgertest.Records(b)...), ledgertest.Lines(forged.String())...),
			"appended", "chain " + fw.Chain() + " not anchored (appended)"},
		"the tail cut": {append(ledgertest.Records(a)[:3], ledgertest.Records(b)...), "cut", "tail cut after 3 (anchor says 5)"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, brk := verify(t, tc.ledger); brk != nil {
				t.Fatalf("the forgery breaks the file's own chain (%v): it would not need anchors", brk)
			}
			rep := verifyAnchored(t, tc.ledger, trusted)
			if len(rep.Forgeries) != 1 || rep.Forgeries[0].Kind != tc.kind || !strings.Contains(rep.Forgeries[0].String(), tc.want) {
				t.Fatalf("forgeries %v, want one %s naming %q", rep.Forgeries, tc.kind, tc.want)
			}
		})
	}
}

// An anchor is trusted only as signed: an edited head, or a chain whose
// anchors name two keys, makes the anchors unusable, said as such.
func TestAnchors_ForgedAnchorsAreRefused(t *testing.T) {
	_, lines, anchors := anchoredChain(t, 4)
	edited := strings.Replace(anchors[1], `"count":2`, `"count":1`, 1)
	if _, err := VerifyAnchored(strings.NewReader(strings.Join(lines, "")), strings.NewReader(edited)); err == nil ||
		!strings.Contains(err.Error(), "signature does not verify") {
		t.Fatalf("an edited anchor: %v", err)
	}
	_, _, other := anchoredChain(t, 1)
	chain := ledgertest.Chain(anchors[0])
	otherChain := ledgertest.Chain(other[0])
	// Same chain id, another key: the signature verifies with that key,
	// but the chain's key is the first anchor's.
	foreign := strings.Replace(other[0], otherChain, chain, 1)
	if _, err := ParseAnchor([]byte(foreign)); err == nil {
		t.Fatal("an anchor whose chain was changed still verifies")
	}
	if _, err := ParseAnchor([]byte(anchors[0])); err != nil {
		t.Fatal(err)
	}
	// A writer of the forger's that takes the chain's id signs validly with
	// its own key: the chain then names two keys.
	var buf bytes.Buffer
	impostor := NewWriter(&buf)
	impostor.chain = chain
	if err := impostor.EnableAnchors(1); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyAnchored(strings.NewReader(strings.Join(lines, "")), strings.NewReader(anchors[0]+buf.String())); err == nil ||
		!strings.Contains(err.Error(), "signed with two keys") {
		t.Fatalf("a second key for the chain: %v", err)
	}
}

// With an anchor missing from the collector's copy (a dropped export
// batch), a rewrite is still found: named exactly when the next anchor's
// digest prefixes cover it, as a span of seqs when they cannot.
func TestAnchors_ARewriteBehindAMissingAnchorIsStillFound(t *testing.T) {
	_, lines, anchors := anchoredChain(t, 5) // anchors at seq 0, 2, 4, 5
	trusted := []string{anchors[0], anchors[2], anchors[3]}
	for _, tc := range []struct {
		record int
		want   string
	}{
		{4, "record 4 rewritten"},
		{1, "a record of seq 1-3 rewritten"},
	} {
		forged := ledgertest.Records(lines)
		forged[tc.record-1] = strings.Replace(forged[tc.record-1], `"surface":"before"`, `"surface":"after"`, 1)
		forged = ledgertest.Rechain(forged)
		rep := verifyAnchored(t, forged, trusted)
		if len(rep.Forgeries) != 1 || !strings.Contains(rep.Forgeries[0].String(), tc.want) {
			t.Errorf("record %d rewritten: forgeries %v, want %q", tc.record, rep.Forgeries, tc.want)
		}
	}
}
