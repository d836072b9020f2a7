// Package fetchhelper runs the sidecar's external skill fetches in a helper
// process of their own (cmd/loadout-fetch, beside loadout-hostd in the
// sidecar image), so the sidecar links no registry or git client: those
// cost it about 2 MiB of resident memory whether or not a context names an
// external skill (docs/benchmarks.md). The sidecar runs the helper per
// fill, hands it a Request as JSON on stdin and reads one Response from its
// stdout, within the fetch's deadline and size bounds. The helper only puts
// bytes in the cache directory; the sidecar's sourcecache.Fetcher verifies
// them (digests, the git proof, signatures) as it would verify any cache,
// so a helper that lies or is subverted by what it parsed can make a fetch
// fail, never serve other content. Both ends of the protocol are here, and
// this package links no registry or git client.
package fetchhelper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/loadout-dev/loadout/internal/sourcecache"
)

// Program is the helper's file name, beside the sidecar's (DefaultPath).
const Program = "loadout-fetch"

// Bounds on what crosses between the processes.
const (
	// maxRequest bounds a request the helper reads.
	maxRequest = 1 << 20
	// maxResponse bounds the answer the sidecar reads; an answer that goes
	// on is a failed fill.
	maxResponse = 64 << 10
	// maxError bounds the error text of an answer, so it fits maxResponse.
	maxError = 16 << 10
	// maxStderr bounds what of the helper's stderr the sidecar keeps, for
	// its log.
	maxStderr = 8 << 10
	// waitDelay is how long the sidecar waits for the helper's pipes to
	// close after it was killed at the deadline.
	waitDelay = time.Second
)

// MaxRunning bounds the helpers one sidecar runs at once. Each is a process
// of its own in the sidecar's container, under its memory limit (14 MiB
// at its peak fetching a 120 MiB skill, docs/benchmarks.md), where
// in-process fetches shared one heap: a context naming many new sources
// must not start a process for each at once. A fill waits for a slot
// within its own deadline.
const MaxRunning = 4

// ReasonHelper is the reason of a fill whose helper did not answer as the
// protocol says (missing, crashed, killed, unreadable answer).
const ReasonHelper = "the skill fetch helper failed (the hostd log has the details)"

// Request is one fill: the Config of the sidecar's flags and what to fetch.
type Request struct {
	sourcecache.Config
	sourcecache.FillRequest
}

// Response is the helper's answer: empty when the fill succeeded, else the
// failure and its short reason (sourcecache's vocabulary).
type Response struct {
	Error  string `json:"error,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// DefaultPath is the helper beside the running program.
func DefaultPath() string {
	exe, err := os.Executable()
	if err != nil {
		return Program
	}
	return filepath.Join(filepath.Dir(exe), Program)
}

// Helper is a sourcecache.Filler that runs the helper program at Path for
// each fill.
type Helper struct {
	Path   string
	Config sourcecache.Config
	// slots holds a token per helper running (MaxRunning); nil: unbounded.
	slots chan struct{}
}

// Error is a fill the helper failed or reported failed. Reason is one of
// sourcecache's reasons (a reason the helper sent that is not one is
// replaced) or ReasonHelper.
type Error struct {
	Reason string
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// New returns the Helper at path for c. When c names credential files
// (--registry-config, --git-credentials, read once at start as the full
// CLI reads them), it runs the helper once to read them, so a file that
// does not parse stops the sidecar at start, as it stops `loadout hostd`,
// rather than failing every fetch. A credentials directory is read at each
// fetch, as in process.
func New(ctx context.Context, path string, c sourcecache.Config) (*Helper, error) {
	h := &Helper{Path: path, Config: c, slots: make(chan struct{}, MaxRunning)}
	if c.RegistryConfig == "" && c.GitCredentials == "" {
		return h, nil
	}
	if err := h.Fill(ctx, sourcecache.FillRequest{}); err != nil {
		return nil, err
	}
	return h, nil
}

// Fill implements sourcecache.Filler: it runs the helper once, killed at
// ctx's deadline.
func (h *Helper) Fill(ctx context.Context, req sourcecache.FillRequest) error {
	in, err := json.Marshal(Request{Config: h.Config, FillRequest: req})
	if err != nil {
		return err
	}
	if h.slots != nil {
		select {
		case h.slots <- struct{}{}:
			defer func() { <-h.slots }()
		case <-ctx.Done():
			return fmt.Errorf("fetch helper %s: waiting for one of %d running helpers to end: %w", h.Path, MaxRunning, ctx.Err())
		}
	}
	cmd := exec.CommandContext(ctx, h.Path)
	cmd.Stdin = bytes.NewReader(in)
	out, stderr := &capped{max: maxResponse}, &capped{max: maxStderr}
	cmd.Stdout, cmd.Stderr = out, stderr
	cmd.WaitDelay = waitDelay
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("fetch helper %s: %w", h.Path, ctx.Err())
	}
	var resp Response
	if out.over || json.Unmarshal(out.buf.Bytes(), &resp) != nil {
		return &Error{Reason: ReasonHelper, Err: fmt.Errorf("fetch helper %s gave no answer it can read (stderr: %q): %w", h.Path, stderr.buf.String(), errors.Join(runErr, errNoAnswer))}
	}
	if resp.Error != "" {
		reason := resp.Reason
		if !sourcecache.KnownReason(reason, h.Config.CredentialFiles()...) {
			reason = sourcecache.ReasonFailed
		}
		return &Error{Reason: reason, Err: fmt.Errorf("fetch helper: %s", resp.Error)}
	}
	if runErr != nil {
		return &Error{Reason: ReasonHelper, Err: fmt.Errorf("fetch helper %s: %w (stderr: %q)", h.Path, runErr, stderr.buf.String())}
	}
	return nil
}

// errNoAnswer is a helper whose stdout held no Response.
var errNoAnswer = errors.New("no answer")

// Reason implements sourcecache.Filler.
func (h *Helper) Reason(err error) string {
	var he *Error
	if errors.As(err, &he) {
		return he.Reason
	}
	return sourcecache.Reason(err)
}

// Serve is the helper's side: it reads one Request from in, fills it with
// the Filler newFiller makes of its Config, and writes the Response to out.
// The error is the request's or the answer's, not the fill's.
func Serve(ctx context.Context, in io.Reader, out io.Writer, newFiller func(sourcecache.Config) (sourcecache.Filler, error)) error {
	var req Request
	if err := json.NewDecoder(io.LimitReader(in, maxRequest)).Decode(&req); err != nil {
		return answer(out, Response{Error: "request: " + err.Error(), Reason: ReasonHelper})
	}
	f, err := newFiller(req.Config)
	if err == nil && (req.Source.OCI != nil || req.Source.Git != nil) {
		// A request without a source only checks the Config (New).
		err = f.Fill(ctx, req.FillRequest)
	}
	if err == nil {
		return answer(out, Response{})
	}
	reason := sourcecache.Reason(err)
	if f != nil {
		reason = f.Reason(err)
	}
	msg := err.Error()
	if len(msg) > maxError {
		msg = msg[:maxError] + "…"
	}
	return answer(out, Response{Error: msg, Reason: reason})
}

func answer(out io.Writer, r Response) error { return json.NewEncoder(out).Encode(r) }

// capped keeps the first max bytes written to it and notes whether more
// came; it never fails a write, so the helper is not stopped by a full pipe.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if left := c.max - c.buf.Len(); len(p) > left {
		c.over = true
		c.buf.Write(p[:max(left, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}
