package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
)

// Forgery is what a ledger's anchors show about it.
type Forgery struct {
	Chain string
	// Kind: rewritten (a record differs from what its anchor signed),
	// deleted (an anchored chain is not in the ledger), appended (a chain
	// no anchor names), cut (the chain ends before its last anchor).
	Kind string
	// Seq is the record rewritten, or the last seq left after a cut.
	Seq uint64
	// Message names the chain and the forgery.
	Message string
}

func (f Forgery) String() string { return f.Message }

// AnchoredReport is VerifyAnchored's finding.
type AnchoredReport struct {
	Summary Summary
	// Break is the ledger's own first break (Verify).
	Break     *Break
	Forgeries []Forgery
	// Anchors counts the anchors trusted; Unanchored the records after
	// their chain's last anchor (written since hostd last signed its head,
	// or never signed: hostd stopped without its shutdown checkpoint).
	Anchors, Unanchored int
}

// VerifyAnchored verifies ledger as Verify does, then against the anchors
// read from anchors: hostd's signed heads as a copy the ledger's holder
// could not write keeps them (the OTLP collector's, or hostd's container
// log as the node's log shipper took it). Each anchor must verify with its
// key, and a chain's anchors must all name one key. Anchors inside ledger
// count too when they verify with their chain's key from anchors: a
// forger holds no key. A chain is named as deleted, appended, rewritten
// (the record, from the anchor's digest prefixes) or cut (after which seq,
// and what the anchor says). An anchor that does not verify is an error:
// the trusted copy itself is not whole.
func VerifyAnchored(ledger, anchors io.Reader) (AnchoredReport, error) {
	var rep AnchoredReport
	raw, err := io.ReadAll(ledger)
	if err != nil {
		return rep, err
	}
	if rep.Summary, rep.Break, err = Verify(bytes.NewReader(raw)); err != nil {
		return rep, err
	}
	trusted := map[string][]Anchor{}
	err = eachLine(anchors, func(n int, line []byte) error {
		if !bytes.HasPrefix(line, []byte(AnchorPrefix)) {
			return nil
		}
		a, err := ParseAnchor(line)
		if err != nil {
			return fmt.Errorf("anchors line %d: %w", n, err)
		}
		if prev := trusted[a.Chain]; len(prev) > 0 && prev[0].Key != a.Key {
			return fmt.Errorf("anchors line %d: chain %s is signed with two keys (%s and %s)", n, a.Chain, prev[0].Key, a.Key)
		}
		trusted[a.Chain] = append(trusted[a.Chain], a)
		return nil
	})
	if err != nil {
		return rep, err
	}

	// The ledger's own records and, for the chains the anchors name, its
	// anchors signed with the chain's key.
	digests := map[string]map[uint64]string{}
	last := map[string]uint64{}
	err = eachLine(bytes.NewReader(raw), func(_ int, line []byte) error {
		switch {
		case bytes.HasPrefix(line, []byte(Prefix)):
			var h header
			if json.Unmarshal(line, &h) != nil {
				return nil // Verify named it
			}
			if digests[h.Chain] == nil {
				digests[h.Chain] = map[uint64]string{}
			}
			if _, dup := digests[h.Chain][h.Seq]; !dup {
				digests[h.Chain][h.Seq] = h.Digest
			}
			last[h.Chain] = max(last[h.Chain], h.Seq)
		case bytes.HasPrefix(line, []byte(AnchorPrefix)):
			if a, err := ParseAnchor(line); err == nil && len(trusted[a.Chain]) > 0 && trusted[a.Chain][0].Key == a.Key {
				trusted[a.Chain] = append(trusted[a.Chain], a)
			}
		}
		return nil
	})
	if err != nil {
		return rep, err
	}

	for _, chain := range sortedKeys(trusted) {
		as := trusted[chain]
		sort.SliceStable(as, func(i, j int) bool { return as[i].Seq < as[j].Seq })
		as = slices.CompactFunc(as, func(a, b Anchor) bool { return a.Seq == b.Seq && a.Head == b.Head })
		rep.Anchors += len(as)
		top := as[len(as)-1]
		got, ok := digests[chain]
		if !ok {
			if top.Seq > 0 {
				rep.Forgeries = append(rep.Forgeries, Forgery{Chain: chain, Kind: "deleted", Seq: top.Seq,
					Message: fmt.Sprintf("chain %s deleted (anchored head missing): its anchor signs seq %d, head %s, and the ledger has no record of it", chain, top.Seq, top.Head)})
			}
			continue
		}
		if f, bad := rewritten(chain, as, got, last[chain]); bad {
			rep.Forgeries = append(rep.Forgeries, f)
		}
		if top.Seq > last[chain] {
			rep.Forgeries = append(rep.Forgeries, Forgery{Chain: chain, Kind: "cut", Seq: last[chain],
				Message: fmt.Sprintf("chain %s: tail cut after %d (anchor says %d): records %d-%d are missing from the end", chain, last[chain], top.Seq, last[chain]+1, top.Seq)})
		} else {
			rep.Unanchored += int(last[chain] - top.Seq)
		}
	}
	for _, chain := range sortedKeys(digests) {
		if _, ok := trusted[chain]; !ok {
			rep.Forgeries = append(rep.Forgeries, Forgery{Chain: chain, Kind: "appended", Seq: last[chain],
				Message: fmt.Sprintf("chain %s not anchored (appended): %d records, and no anchor of hostd's names the chain", chain, len(digests[chain]))})
		}
	}
	return rep, nil
}

// rewritten compares the ledger's digests of chain with each anchor up to
// seq last: the first anchor whose head the ledger does not hold names the
// record, the first after the previous anchor whose digest is not the one
// the anchor's since lists.
func rewritten(chain string, as []Anchor, got map[uint64]string, last uint64) (Forgery, bool) {
	var prev uint64
	for _, a := range as {
		if a.Seq == 0 || a.Seq > last {
			continue
		}
		if got[a.Seq] == a.Head {
			prev = a.Seq
			continue
		}
		// Since covers the records after the anchor hostd wrote before
		// this one, which the anchors at hand may lack (a dropped export
		// batch). A rewrite changes every digest after it, so the first
		// that differs is the record, unless it is the first Since holds
		// and records before it are not covered: then it is one of those.
		base := a.Seq - min(uint64(len(a.Since)), a.Seq)
		n, what := prev+1, fmt.Sprintf("a record of seq %d-%d", prev+1, a.Seq)
		for i, p := range a.Since {
			s := base + 1 + uint64(i)
			if s <= prev || digestPrefix(got[s]) == p {
				continue
			}
			if s == prev+1 || i > 0 {
				n, what = s, fmt.Sprintf("record %d", s)
			} else {
				what = fmt.Sprintf("a record of seq %d-%d", prev+1, s)
			}
			break
		}
		return Forgery{Chain: chain, Kind: "rewritten", Seq: n,
			Message: fmt.Sprintf("chain %s: %s rewritten: it is not the record hostd wrote (the anchor at seq %d signs head %s; the ledger has %s)", chain, what, a.Seq, a.Head, orNone(got[a.Seq]))}, true
	}
	return Forgery{}, false
}

func orNone(s string) string {
	if s == "" {
		return "no record there"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// eachLine calls fn with each line of r (1-based number, without its line
// ending) until fn fails.
func eachLine(r io.Reader, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(n, bytes.TrimRight(sc.Bytes(), "\r")); err != nil {
			return err
		}
	}
	return sc.Err()
}
