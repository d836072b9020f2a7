package ledger

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Break is the first place a ledger is not whole.
type Break struct {
	// Line is the 1-based line of the file; Seq the record's seq there (0
	// when the line does not parse).
	Line  int
	Seq   uint64
	Chain string
	// Kind: edited, gap, reorder, malformed.
	Kind    string
	Message string
}

func (b *Break) Error() string {
	return fmt.Sprintf("line %d (chain %s, seq %d): %s: %s", b.Line, b.Chain, b.Seq, b.Kind, b.Message)
}

// Summary describes a whole ledger.
type Summary struct {
	Records int
	// Chains maps each chain id to its last seq.
	Chains map[string]uint64
	// Skipped counts lines that are not records (a mixed log).
	Skipped int
}

func (s Summary) String() string {
	ids := make([]string, 0, len(s.Chains))
	for id := range s.Chains {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s: seq 1-%d", id, s.Chains[id])
	}
	return fmt.Sprintf("%d records in %d chains (%s), %d other lines skipped", s.Records, len(ids), strings.Join(parts, ", "), s.Skipped)
}

type chainState struct {
	seq  uint64
	prev string
	line int
}

// Verify reads records (JSON lines; lines that are not records are
// skipped) and returns the first break, or nil and a summary.
//
// A record whose bytes do not hash to its digest was edited; a seq that is
// not the previous one's plus one is a gap (records deleted, or the chain's
// first ones missing) or a reorder (a seq at or below one already seen); a
// prev that is not the previous record's digest means the record before it
// was replaced (edited with its digest recomputed). Records deleted from the
// end of a chain cannot be seen from the file alone: compare the last seq
// with hostd's loadout_hostd_ledger_records_total.
func Verify(r io.Reader) (Summary, *Break, error) {
	sum := Summary{Chains: map[string]uint64{}}
	type record struct {
		line int
		raw  []byte
		hdr  header
		err  error
	}
	// Every record first: a gap whose records come later in the file is a
	// reorder, not a deletion.
	var recs []record
	type pos struct {
		chain string
		seq   uint64
	}
	at := map[pos]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimRight(sc.Bytes(), "\r")
		if !bytes.HasPrefix(raw, []byte(Prefix)) {
			sum.Skipped++
			continue
		}
		rec := record{line: line, raw: append([]byte{}, raw...)}
		rec.err = json.Unmarshal(raw, &rec.hdr)
		if _, dup := at[pos{rec.hdr.Chain, rec.hdr.Seq}]; rec.err == nil && !dup {
			at[pos{rec.hdr.Chain, rec.hdr.Seq}] = line
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return sum, nil, err
	}
	chains := map[string]*chainState{}
	for _, rec := range recs {
		hdr, raw, line := rec.hdr, rec.raw, rec.line
		if rec.err != nil {
			return sum, &Break{Line: line, Kind: "malformed", Message: "the record is not JSON: " + rec.err.Error()}, nil
		}
		brk := func(kind, format string, args ...any) (Summary, *Break, error) {
			return sum, &Break{Line: line, Seq: hdr.Seq, Chain: hdr.Chain, Kind: kind, Message: fmt.Sprintf(format, args...)}, nil
		}
		i := bytes.LastIndex(raw, []byte(digestKey))
		if i < 0 || !bytes.HasSuffix(raw, []byte(`"}`)) {
			return brk("malformed", "the record does not end with its digest")
		}
		canon := append(append([]byte{}, raw[:i]...), '}')
		h := sha256.Sum256(canon)
		if got := "sha256:" + hex.EncodeToString(h[:]); got != hdr.Digest || string(raw[i+len(digestKey):len(raw)-2]) != got {
			return brk("edited", "the record's bytes hash to %s, not to its digest %s: it was changed after it was written", got, hdr.Digest)
		}
		st, seen := chains[hdr.Chain]
		want := uint64(1)
		if seen {
			want = st.seq + 1
		}
		if hdr.Seq > want {
			for s := want; s < hdr.Seq && s-want < 4096; s++ {
				if l, ok := at[pos{hdr.Chain, s}]; ok && l > line {
					return brk("reorder", "seq %d comes before seq %d (line %d): records are out of order", hdr.Seq, s, l)
				}
			}
		}
		switch {
		case !seen && hdr.Seq != 1:
			return brk("gap", "the chain starts at seq %d: records 1-%d are missing (deleted, or the file begins after a rotation)", hdr.Seq, hdr.Seq-1)
		case !seen && hdr.Prev != "":
			return brk("edited", "seq 1 names a previous record")
		case seen && hdr.Seq <= st.seq:
			return brk("reorder", "seq %d comes after seq %d (line %d): records are out of order or repeated", hdr.Seq, st.seq, st.line)
		case seen && hdr.Seq != want:
			return brk("gap", "seq %d follows seq %d (line %d): records %d-%d are missing", hdr.Seq, st.seq, st.line, want, hdr.Seq-1)
		case seen && hdr.Prev != st.prev:
			return brk("edited", "its prev %s is not the digest of seq %d (line %d), %s: that record was replaced", hdr.Prev, st.seq, st.line, st.prev)
		}
		if !seen {
			st = &chainState{}
			chains[hdr.Chain] = st
		}
		st.seq, st.prev, st.line = hdr.Seq, hdr.Digest, line
		sum.Records++
		sum.Chains[hdr.Chain] = hdr.Seq
	}
	return sum, nil, nil
}

type header struct {
	Chain  string `json:"chain"`
	Seq    uint64 `json:"seq"`
	Prev   string `json:"prev"`
	Digest string `json:"digest"`
}
