package outbound

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/loadout-dev/loadout/internal/caroots"
)

// Defaults of a Client whose Options leave them unset.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxResponseBytes = 1 << 20
)

// maxTransports bounds the per-CA-bundle transport cache. Bundles come from
// Extensions, so a tenant could otherwise grow it without limit.
const maxTransports = 64

// Target is where a call goes: a URL its caller resolved (always a Service of
// the calling extension's namespace) and the PEM CA bundle that verifies the
// Service's serving certificate. An empty bundle means the system roots.
type Target struct {
	URL      string
	CABundle []byte
}

// Request is one call.
type Request struct {
	// Method defaults to POST when Body is set and GET otherwise.
	Method string
	Target Target
	// Body is sent as is and, when the client has a signing key, signed.
	// A signed body should name its receiver as "audience" (Audience).
	Body []byte
	// Header is added to the request (Content-Type, Accept, ...).
	Header http.Header
	// Timeout bounds this call; zero means the client's default. The
	// caller's context can only shorten it.
	Timeout time.Duration
	// Anonymous sends the call without the service token and unsigned: for
	// a server outside the cluster, which must never receive hostd's
	// identity (a token another Service would accept).
	Anonymous bool
}

// Response is a 2xx answer, its body read in full (within the cap).
type Response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

// Doer makes calls. *Client is the real one; tests and `loadout preview`
// (which contacts nothing) substitute their own.
type Doer interface {
	Do(ctx context.Context, req Request) (*Response, error)
}

// DoerFunc adapts a function to Doer.
type DoerFunc func(ctx context.Context, req Request) (*Response, error)

// Do implements Doer.
func (f DoerFunc) Do(ctx context.Context, req Request) (*Response, error) { return f(ctx, req) }

// StatusError is a non-2xx answer. It carries the status only: the body of
// an error or redirect answer is never read, so nothing a Service (or the
// target of its redirect) returns leaks into errors, conditions or logs.
type StatusError struct {
	StatusCode int
	Status     string
}

func (e *StatusError) Error() string {
	if e.StatusCode >= 300 && e.StatusCode < 400 {
		return fmt.Sprintf("answered %s; redirects are not followed", e.Status)
	}
	return "answered " + e.Status
}

// Options configure a Client.
type Options struct {
	// Timeout is the deadline of a call whose Request sets none. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes caps a response body; a longer one is an error. Zero
	// means DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// SigningKeyFile, when set, names a file (a mounted Secret key) holding
	// Standard Webhooks secrets (ParseSecrets) that sign every call (Sign).
	// It is read on each call, so a rotated Secret takes effect without a
	// restart; a missing or bad file fails the call rather than sending it
	// unsigned.
	SigningKeyFile string
	// ServiceTokenFile, when set, names a projected ServiceAccount token
	// (the kubelet writes and rotates it) sent as "Authorization: Bearer" on
	// every call, so a Service can verify with a TokenReview that the call
	// came from this pod's hostd (internal/toolauth, docs/hostd.md). It is
	// read again every TokenTTL; a missing or empty file fails the call
	// rather than sending it without the token. The token is never logged.
	ServiceTokenFile string
	// TokenTTL is how long a read token is reused; zero means
	// DefaultTokenTTL.
	TokenTTL time.Duration
	// Now stamps signed calls; nil means time.Now.
	Now func() time.Time
	// Addresses dials some Service host:port pairs at other addresses
	// ("review-notes.team-a.svc:8080" → "127.0.0.1:9000"), as curl --resolve
	// does: the URL, Host header and TLS server name stay the Service's. It is
	// for running hostd outside a cluster (make demo, a laptop); in a pod the
	// cluster's DNS resolves Services.
	Addresses map[string]string
}

// Client is safe for concurrent use.
type Client struct {
	opts Options

	token *tokenSource

	mu         sync.Mutex
	transports map[[sha256.Size]byte]*http.Transport
}

// New returns a Client.
func New(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Client{opts: opts, transports: map[[sha256.Size]byte]*http.Transport{}}
	if opts.ServiceTokenFile != "" {
		ttl := opts.TokenTTL
		if ttl <= 0 {
			ttl = DefaultTokenTTL
		}
		c.token = &tokenSource{file: opts.ServiceTokenFile, ttl: ttl, now: opts.Now}
	}
	return c
}

// Do sends req and returns its 2xx answer. Any other status is a
// *StatusError; a redirect is never followed.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	u, err := url.Parse(req.Target.URL)
	if err != nil {
		return nil, fmt.Errorf("target URL: %w", err)
	}
	switch {
	case u.Scheme == "http" && len(req.Target.CABundle) > 0:
		return nil, fmt.Errorf("%s: a caBundle needs an https target", u.Redacted())
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%s: scheme must be https or http", u.Redacted())
	}
	transport, err := c.transport(req.Target.CABundle)
	if err != nil {
		return nil, err
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = c.opts.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	method := req.Method
	if method == "" {
		method = http.MethodGet
		if req.Body != nil {
			method = http.MethodPost
		}
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(req.Body))
	if err != nil {
		return nil, err
	}
	for k, vs := range req.Header {
		hreq.Header[k] = append([]string(nil), vs...)
	}
	hreq.Header.Set("User-Agent", "loadout")
	// An Authorization the caller set (an MCP server's key from a platform
	// Secret) is the server's credential and stays; the token is then not
	// sent.
	if c.token != nil && !req.Anonymous && hreq.Header.Get("Authorization") == "" {
		tok, err := c.token.get()
		if err != nil {
			return nil, err
		}
		hreq.Header.Set("Authorization", "Bearer "+tok)
	}
	if c.opts.SigningKeyFile != "" && !req.Anonymous {
		if err := c.sign(hreq, req.Body); err != nil {
			return nil, err
		}
	}
	client := &http.Client{
		Transport:     caroots.Transport(transport),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{StatusCode: resp.StatusCode, Status: resp.Status}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	if int64(len(body)) > c.opts.MaxResponseBytes {
		return nil, fmt.Errorf("answer exceeds %d bytes", c.opts.MaxResponseBytes)
	}
	return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// dial connects to addr, or to where Options.Addresses sends it.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if to, ok := c.opts.Addresses[addr]; ok {
		addr = to
	}
	return (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
}

// transport returns the shared transport that verifies against bundle,
// building it on first use. Transports are cached so connections are reused
// across calls.
func (c *Client) transport(bundle []byte) (*http.Transport, error) {
	key := sha256.Sum256(bundle)
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.transports[key]; ok {
		return t, nil
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(bundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(bundle) {
			return nil, errors.New("caBundle holds no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	if len(c.transports) >= maxTransports {
		for k, t := range c.transports {
			t.CloseIdleConnections()
			delete(c.transports, k)
		}
	}
	t := &http.Transport{
		// Never through a proxy: the target is a cluster Service.
		Proxy:                 nil,
		DialContext:           c.dial,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   5 * time.Second,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // the call's deadline bounds it
	}
	c.transports[key] = t
	return t, nil
}
