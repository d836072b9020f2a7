package mcpheaders

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/loadout-dev/loadout/internal/jsonlimit"
	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/ttlcache"
)

// Defaults of the Fetcher: headers are kept a minute (a rotated key
// reaches calls within it; the manager is asked once a minute per server at
// most while calls flow), an answer waits at most 5 s, and at most 64
// servers' headers are held.
const (
	DefaultTTL        = time.Minute
	DefaultTimeout    = 5 * time.Second
	DefaultMaxEntries = 64
)

// FetcherOptions configure hostd's side.
type FetcherOptions struct {
	// URL is the manager's endpoint (https only).
	URL string
	// CA is the endpoint's certificate (PEM), the only one trusted for it.
	CA []byte
	// TokenFile is the projected token for Audience, re-read as the kubelet
	// rotates it.
	TokenFile string
	// Addresses dials hosts elsewhere (outbound.Options.Addresses).
	Addresses  map[string]string
	TTL        time.Duration
	Timeout    time.Duration
	MaxEntries int
	Now        func() time.Time
}

// Fetcher gets MCP servers' headers from the manager for hostd, keeping
// each briefly in memory. It never logs or returns a value in an error.
type Fetcher struct {
	opts   FetcherOptions
	client outbound.Doer

	mu      sync.Mutex
	entries *ttlcache.Cache[string, entry]
	flights map[string]*flight
}

type entry struct {
	endpoint string
	headers  http.Header
}

// flight is one request to the manager that concurrent calls for the same
// server wait for, so a burst of calls costs one request.
type flight struct {
	done chan struct{}
	ans  entry
	err  error
}

// NewFetcher checks opts and returns a Fetcher; it contacts nothing yet.
func NewFetcher(opts FetcherOptions) (*Fetcher, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("the MCP headers endpoint %q must be an https:// URL", opts.URL)
	}
	if len(bytes.TrimSpace(opts.CA)) == 0 {
		return nil, errors.New("the MCP headers endpoint needs its CA certificate: without it hostd would trust any server with its token")
	}
	if opts.TokenFile == "" {
		return nil, errors.New("the MCP headers endpoint needs a token file (audience " + Audience + ")")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	client := outbound.New(outbound.Options{ServiceTokenFile: opts.TokenFile, MaxResponseBytes: MaxAnswerBytes,
		Timeout: opts.Timeout, Addresses: opts.Addresses})
	return &Fetcher{opts: opts, client: client, entries: ttlcache.New[string, entry](opts.MaxEntries), flights: map[string]*flight{}}, nil
}

// Headers returns the headers of the MCP server of extension
// ("namespace/name") for a call to endpoint: from memory while fresh, else
// from the manager. An error (the manager down, refusing, or answering for
// another endpoint) means the call must not be sent.
func (f *Fetcher) Headers(ctx context.Context, extension, endpoint string) (http.Header, error) {
	now := f.opts.Now()
	f.mu.Lock()
	if e, ok := f.entries.Get(extension, now); ok && e.endpoint == endpoint {
		f.mu.Unlock()
		return e.headers.Clone(), nil
	}
	fl, waiting := f.flights[extension]
	if !waiting {
		fl = &flight{done: make(chan struct{})}
		f.flights[extension] = fl
	}
	f.mu.Unlock()
	if !waiting {
		fl.ans, fl.err = f.fetch(ctx, extension)
		f.mu.Lock()
		delete(f.flights, extension)
		if fl.err == nil {
			f.entries.Put(extension, fl.ans, now, now.Add(f.opts.TTL))
		}
		f.mu.Unlock()
		close(fl.done)
	}
	select {
	case <-fl.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("the headers of %s from the manager: %w", extension, ctx.Err())
	}
	if fl.err != nil {
		return nil, fl.err
	}
	if fl.ans.endpoint != endpoint {
		return nil, fmt.Errorf("the manager's headers of %s are for %s, not %s: the context is not current yet", extension, fl.ans.endpoint, endpoint)
	}
	return fl.ans.headers.Clone(), nil
}

func (f *Fetcher) fetch(ctx context.Context, extension string) (entry, error) {
	fail := func(format string, a ...any) (entry, error) {
		return entry{}, fmt.Errorf("the headers of %s from the manager (%s): %s", extension, f.opts.URL, fmt.Sprintf(format, a...))
	}
	body, err := json.Marshal(Request{Extension: extension})
	if err != nil {
		return entry{}, err
	}
	resp, err := f.client.Do(ctx, outbound.Request{Method: http.MethodPost, Target: outbound.Target{URL: f.opts.URL, CABundle: f.opts.CA},
		Body: body, Header: http.Header{"Content-Type": {"application/json"}}})
	var status *outbound.StatusError
	switch {
	case errors.As(err, &status):
		return fail("refused with %s", status.Status)
	case err != nil:
		return fail("%v", err)
	}
	if _, err := jsonlimit.Admit(ctx, resp.Body, 4*MaxHeaders+8); err != nil {
		return fail("answer refused: it %v", err)
	}
	var ans Answer
	if err := json.Unmarshal(resp.Body, &ans); err != nil {
		return fail("answer is not JSON of the expected shape")
	}
	h := http.Header{}
	for k, v := range ans.Headers {
		h.Set(k, v)
	}
	if len(ans.Headers) != len(h) {
		return fail("answer repeats a header name")
	}
	if err := Check(h); err != nil {
		return fail("answer refused: %v", err)
	}
	if ans.Endpoint == "" {
		return fail("answer names no endpoint")
	}
	return entry{endpoint: ans.Endpoint, headers: h}, nil
}

// Broken is a HeaderSource for a hostd whose endpoint configuration is
// unusable: every request fails with err, so every call that needs headers
// is blocked naming why.
func Broken(err error) mcpclient.HeaderSource {
	return broken{err}
}

type broken struct{ err error }

func (b broken) Headers(context.Context, string, string) (http.Header, error) {
	return nil, fmt.Errorf("this hostd cannot ask the manager for MCP headers: %w", b.err)
}
