package ledger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// AnchorVersion is the ledgerAnchor field of every anchor; a line that
// starts with AnchorPrefix is an anchor.
const AnchorVersion = "loadout.dev/decisions-anchor/v1"

// AnchorPrefix starts every anchor line.
const AnchorPrefix = `{"ledgerAnchor":"` + AnchorVersion + `",`

const sigKey = `,"sig":"`

// sinceLen is how much of a record's digest an anchor's since keeps: the
// hex digits after "sha256:", 64 bits.
const sinceLen = 16

// digestPrefix is the part of digest an anchor's since keeps.
func digestPrefix(digest string) string {
	const algo = len("sha256:")
	if len(digest) < algo+sinceLen {
		return digest
	}
	return digest[algo : algo+sinceLen]
}

// DefaultAnchorEvery is how many records a chain grows by between two
// anchors at most; hostd also anchors a head that has not moved for its
// --ledger-anchor-interval, and at shutdown.
const DefaultAnchorEvery = 256

// Anchor is a chain's head as hostd signed it: whoever holds a ledger
// cannot rewrite what came before it, drop the chain, or cut it shorter
// without a verifier holding the anchor seeing it (VerifyAnchored). Seq 0
// starts a chain: it publishes the chain's key before any record.
type Anchor struct {
	Chain string `json:"chain"`
	// Seq is the head's seq (0: no record yet), Head its digest.
	Seq  uint64 `json:"seq"`
	Head string `json:"head"`
	// Count is how many of the chain's records were written (a failed
	// write leaves a gap the chain shows).
	Count uint64 `json:"count"`
	// Since holds the first 16 hex digits of the digest of each record
	// after the previous anchor, up to this one's seq: enough for a
	// verifier to name the record that was rewritten, where the head
	// alone says only that one was.
	Since []string `json:"since"`
	Time  string   `json:"time"`
	// Key is the chain's Ed25519 public key, "ed25519:" and base64: one
	// per hostd process, generated at start, never written anywhere.
	Key string `json:"key"`
	Sig string `json:"sig"`
}

// anchorer signs a Writer's heads with the process's key.
type anchorer struct {
	key   ed25519.PrivateKey
	pub   string
	every uint64
	// last is the seq of the last anchor; since the digest prefixes of
	// the records after it.
	last  uint64
	since []string
	now   func() time.Time
}

// EnableAnchors makes l sign its head with a fresh Ed25519 key (kept in
// memory only) every `every` records (DefaultAnchorEvery when 0), whenever
// Checkpoint finds it moved, and once now, at seq 0, which publishes the
// key. Each anchor is a line of l's output (skipped by Verify) and is given
// to OnAnchor (an exporter). Call it before the first Write.
func (l *Writer) EnableAnchors(every int) error {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("ledger anchor key: %w", err)
	}
	if every <= 0 {
		every = DefaultAnchorEvery
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.anchors = &anchorer{key: key, pub: "ed25519:" + base64.StdEncoding.EncodeToString(pub), every: uint64(every), now: time.Now}
	l.anchorLocked()
	return nil
}

// Checkpoint anchors l's head if it moved since the last anchor: hostd
// calls it on a timer and at shutdown, so an idle chain's tail is anchored
// too. Without EnableAnchors it does nothing.
func (l *Writer) Checkpoint() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.anchors != nil && l.anchors.last != l.seq {
		l.anchorLocked()
	}
}

// anchorLocked signs and writes the current head; l.mu is held.
func (l *Writer) anchorLocked() {
	a := l.anchors
	a.last = l.seq
	b := append([]byte{}, AnchorPrefix...)
	b = append(b, `"chain":"`...)
	b = append(b, l.chain...)
	b = append(b, `","seq":`...)
	b = strconv.AppendUint(b, l.seq, 10)
	b = append(b, `,"head":"`...)
	b = append(b, l.prev...)
	b = append(b, `","count":`...)
	b = strconv.AppendUint(b, l.written.Load(), 10)
	b = append(b, `,"since":[`...)
	for i, d := range a.since {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, d...)
		b = append(b, '"')
	}
	a.since = a.since[:0]
	b = append(b, `],"time":"`...)
	b = append(b, a.now().UTC().Format(time.RFC3339Nano)...)
	b = append(b, `","key":"`...)
	b = append(b, a.pub...)
	b = append(b, `"}`...)
	sig := ed25519.Sign(a.key, b)
	b = append(b[:len(b)-1], sigKey...)
	b = append(b, base64.StdEncoding.EncodeToString(sig)...)
	b = append(b, "\"}\n"...)
	if l.OnAnchor != nil {
		l.OnAnchor(b[:len(b)-1])
	}
	if _, err := l.w.Write(b); err != nil {
		l.report(fmt.Errorf("ledger anchor: %w", err))
	}
}

// ParseAnchor reads an anchor line and checks its signature against the
// key it names. Whether that key is the chain's is the verifier's to
// decide (the chain's anchors must all name one key).
func ParseAnchor(line []byte) (Anchor, error) {
	var a Anchor
	line = bytes.TrimRight(line, "\r\n")
	if !bytes.HasPrefix(line, []byte(AnchorPrefix)) {
		return a, errors.New("not an anchor line")
	}
	if err := json.Unmarshal(line, &a); err != nil {
		return a, fmt.Errorf("anchor is not JSON: %w", err)
	}
	i := bytes.LastIndex(line, []byte(sigKey))
	if i < 0 || !bytes.HasSuffix(line, []byte(`"}`)) {
		return a, errors.New("anchor does not end with its signature")
	}
	pub, ok := bytes.CutPrefix([]byte(a.Key), []byte("ed25519:"))
	key, kerr := base64.StdEncoding.DecodeString(string(pub))
	sig, serr := base64.StdEncoding.DecodeString(a.Sig)
	if !ok || kerr != nil || len(key) != ed25519.PublicKeySize || serr != nil {
		return a, fmt.Errorf("anchor of chain %s seq %d: malformed key or signature", a.Chain, a.Seq)
	}
	signed := append(append([]byte{}, line[:i]...), '}')
	if string(line[i+len(sigKey):len(line)-2]) != a.Sig || !ed25519.Verify(key, signed, sig) {
		return a, fmt.Errorf("anchor of chain %s seq %d: the signature does not verify with its key", a.Chain, a.Seq)
	}
	return a, nil
}
