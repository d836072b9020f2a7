// Package ledger writes and verifies hostd's decision ledger: one JSON line
// per verdict hostd reaches, hash-chained per process so a deleted,
// reordered or edited record is detectable (docs/hostd.md, "Decision
// ledger").
//
// A record line is
//
//	{"ledger":"loadout.dev/decisions/v1","chain":C,"seq":N,"prev":P,...,"digest":D}
//
// Its canonical bytes are the line with its final `,"digest":"…"` member
// removed (the closing brace kept); D is "sha256:" and the hex SHA-256 of
// those bytes, and P is the previous record's D ("" for seq 1). chain is a
// random id per process: records of several processes (a restarted hostd
// appending to one file) verify as separate chains. Arguments are never in
// a record, only their digests.
package ledger

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Version is the ledger field of every record; a line that starts with
// Prefix is a record.
const Version = "loadout.dev/decisions/v1"

// Prefix starts every record line.
const Prefix = `{"ledger":"` + Version + `",`

const digestKey = `,"digest":"`

// Hook is one hook's run, whatever it decided, in the order the hooks ran.
type Hook struct {
	Extension string `json:"extension"`
	Hook      string `json:"hook"`
	// Outcome: allowed, rewrote, asked, denied, error, timeout or audit.
	Outcome string `json:"outcome"`
	// Micros is how long hostd waited for the hook, in microseconds.
	Micros int64 `json:"micros"`
	// Start is when the hook began, for exporters' spans; not recorded.
	Start time.Time `json:"-"`
}

// Approval is what became of an ask taken to the cluster.
type Approval struct {
	// Name is the Approval object's (empty when none could be created).
	Name string `json:"name,omitempty"`
	// Decision: Approved, Denied, Expired, Pending, Reused, Deleted or
	// Unavailable.
	Decision  string `json:"decision"`
	DecidedBy string `json:"decidedBy,omitempty"`
}

// Record is what a verdict records. The chain fields (chain, seq, prev,
// digest) are the Writer's.
type Record struct {
	Time string `json:"time"`
	// Surface is the hostd path that reached it: before, after, tools
	// (/v1/tools and MCP tools/call), events, claude-code.
	Surface string `json:"surface"`
	Event   string `json:"event"`
	Tool    string `json:"tool,omitempty"`
	CallID  string `json:"callId,omitempty"`
	// Verdict: allowed, ask, blocked (a tool call); allowed, ask, stopped
	// (an event); observed (after hooks).
	Verdict string `json:"verdict"`
	// Reason classifies a verdict other than allowed: deniedTool, hook,
	// hookFailure, invalidArguments, rewriteRefused, approval, StalePolicy.
	Reason string `json:"reason,omitempty"`
	Hooks  []Hook `json:"hooks,omitempty"`
	// Approval is set when a hook's ask went to the cluster.
	Approval *Approval `json:"approval,omitempty"`
	// Rewritten says hooks changed the arguments (or the prompt).
	Rewritten bool `json:"rewritten,omitempty"`
	// Executed says hostd ran the tool's Service (surface tools).
	Executed bool `json:"executed,omitempty"`
	// ArgumentsDigest is the digest of the call's arguments (or the
	// prompt's text) as the agent sent them; ArgumentsDigestAfter as they
	// ran, after every rewrite.
	ArgumentsDigest      string `json:"argumentsDigest,omitempty"`
	ArgumentsDigestAfter string `json:"argumentsDigestAfter,omitempty"`
	// Arguments are the call's arguments as the agent sent them (JSON), and
	// Prompt the prompt's text, only when the extension of a hook that
	// judged them sets recordArguments: they may hold secrets. `loadout
	// test` replays records that carry them.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Prompt    *string         `json:"prompt,omitempty"`
	// Context is the served context's hash.
	Context   string `json:"context,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Pod       string `json:"pod,omitempty"`
}

// Writer appends records to one io.Writer, one line each, chained. It is
// safe for concurrent use; writes are serialized. A failed write is counted
// and reported to OnError, never returned: a verdict does not wait on it.
type Writer struct {
	// OnError, when set, is told of each failed write.
	OnError func(error)
	// OnRecord, when set, is given each record line (without its newline)
	// in chain order, under the Writer's lock: an exporter (OTLP) sends
	// the very bytes the file holds. It must not block and must not keep
	// line.
	OnRecord func(line []byte, r *Record)
	// OnAnchor, when set, is given each anchor line (without its newline)
	// under the Writer's lock (EnableAnchors). Same rules as OnRecord.
	OnAnchor func(line []byte)

	mu      sync.Mutex
	anchors *anchorer
	w       io.Writer
	chain   string
	seq     uint64
	prev    string
	buf     []byte

	written, failed atomic.Uint64
}

// NewWriter returns a Writer appending to w under a new random chain id.
func NewWriter(w io.Writer) *Writer {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Writer{w: w, chain: hex.EncodeToString(b[:])}
}

// Chain is the Writer's chain id.
func (l *Writer) Chain() string { return l.chain }

// Written and Failed count the records written and those whose write failed.
func (l *Writer) Written() uint64 { return l.written.Load() }

// Failed counts the records whose write failed.
func (l *Writer) Failed() uint64 { return l.failed.Load() }

// Write chains and appends r. A nil Writer writes nothing.
func (l *Writer) Write(r *Record) {
	if l == nil {
		return
	}
	// Marshalled once, outside the lock: only the chain fields and the
	// digest are added under it.
	body, err := json.Marshal(r)
	if err != nil { // a Record always marshals
		l.failed.Add(1)
		l.report(err)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	b := append(l.buf[:0], Prefix...)
	b = append(b, `"chain":"`...)
	b = append(b, l.chain...)
	b = append(b, `","seq":`...)
	b = strconv.AppendUint(b, l.seq, 10)
	b = append(b, `,"prev":"`...)
	b = append(b, l.prev...)
	b = append(b, `",`...)
	b = append(b, body[1:len(body)-1]...)
	b = append(b, '}')
	sum := sha256.Sum256(b)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	b = append(b[:len(b)-1], digestKey...)
	b = append(b, digest...)
	b = append(b, "\"}\n"...)
	l.buf = b
	l.prev = digest
	if l.OnRecord != nil {
		l.OnRecord(b[:len(b)-1], r)
	}
	if _, err := l.w.Write(b); err != nil {
		l.failed.Add(1)
		l.report(err)
	} else {
		l.written.Add(1)
	}
	if l.anchors != nil {
		l.anchors.since = append(l.anchors.since, digestPrefix(digest))
		if l.seq-l.anchors.last >= l.anchors.every {
			l.anchorLocked()
		}
	}
}

func (l *Writer) report(err error) {
	if l.OnError != nil {
		l.OnError(err)
	}
}

// Digest is the digest of a value as JSON (object keys sorted): what a
// record carries for a call's arguments. Nil and empty arguments digest
// alike.
func Digest(v map[string]any) string {
	if len(v) == 0 {
		return DigestBytes([]byte("{}"))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return DigestBytes(b)
}

// DigestBytes is "sha256:" and the hex SHA-256 of b.
func DigestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
