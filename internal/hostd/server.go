package hostd

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/sources"
)

// Options configure a Server.
type Options struct {
	// ContextDir is the mounted context ConfigMap (or a plain directory with
	// its four keys).
	ContextDir string
	// ContextKeys is the trust anchor: a context loads only when the manager
	// signed it with one of these keys for Workspace. Nil loads unsigned
	// contexts (development and tests; `loadout hostd` needs
	// --allow-unsigned-context for that).
	ContextKeys *contextsig.Verifier
	// Workspace is "namespace/name" of the Workspace this host serves; a
	// context of another Workspace is refused. Empty: the one the context
	// names.
	Workspace string
	// PollInterval is how often the directory is checked for a new context.
	// Zero means one second.
	PollInterval time.Duration
	// SigningKeyFile is a mounted Secret key; when set, every webhook request
	// body is signed with it (outbound.SignatureHeader, docs/hostd.md).
	SigningKeyFile string
	// ServiceAddresses dials Service host:port pairs at local addresses
	// (outbound.Options.Addresses), for running outside a cluster.
	ServiceAddresses map[string]string
	// Outbound calls webhook hooks; nil means an outbound.Client (no
	// redirects, signed with SigningKeyFile), bounded by each hook's timeout.
	Outbound outbound.Doer
	// Now stamps rendered messages; nil means time.Now.
	Now func() time.Time
	// Logger receives reload events; nil means slog.Default().
	Logger *slog.Logger
	// MaterializeDir, when set, is kept holding the served context as the
	// files agents read (internal/materialize): every load writes it before
	// the new context is served, and a load whose tree cannot be written
	// fails like any other bad load, keeping the last good context and tree.
	MaterializeDir string
	// Materialize configures that tree (content source, Claude Code layout).
	Materialize materialize.Options
	// Sources fetches external skills (docs/concepts.md); nil means a
	// fetcher with a cache under the system temporary directory and no
	// credentials.
	Sources *sources.Fetcher
	// Limits bound the API listener's connections (zero fields: DefaultLimits).
	Limits Limits
	// SourceRetry is how often a load that failed on an external source is
	// tried again while the context stays the same. Zero means 10 seconds.
	SourceRetry time.Duration
}

// Server serves one Workspace's context and hooks over HTTP.
type Server struct {
	opts    Options
	current atomic.Pointer[snapshot]
	metrics *metrics
	limits  *limiter
	mux     *http.ServeMux
	mcp     *mcpTools

	mu         sync.Mutex // guards the fields below and serialises reloads
	lastError  error
	lastSource fingerprint
	lastTry    time.Time
}

// New returns a Server. Call Reload (or Run) to load the context; until one
// load succeeds, /readyz and the /v1 endpoints answer 503.
func New(opts Options) *Server {
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.Outbound == nil {
		opts.Outbound = outbound.New(outbound.Options{SigningKeyFile: opts.SigningKeyFile, Addresses: opts.ServiceAddresses})
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Sources == nil {
		opts.Sources = sources.New(sources.Options{CacheDir: filepath.Join(os.TempDir(), "loadout-sources")})
	}
	if opts.SourceRetry <= 0 {
		opts.SourceRetry = 10 * time.Second
	}
	opts.Limits = opts.Limits.withDefaults()
	s := &Server{opts: opts, metrics: newMetrics(), limits: newLimiter(opts.Limits), mcp: newMCPServer("v1alpha1")}
	s.mux = s.routes()
	return s
}

// Handler is the HTTP API, answering only local, same-origin JSON callers
// (localOnly) within the listener's limits.
func (s *Server) Handler() http.Handler { return localOnly(s.limits.wrap(s.mux)) }

// Reload loads the context directory if it changed since the last attempt
// (or force is set) and swaps it in only when the whole load succeeded. A
// failed load keeps the current context and is returned and reported in
// /readyz, the log and the reload metric.
func (s *Server) Reload(ctx context.Context, force bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fp := takeFingerprint(s.opts.ContextDir)
	var sourceErr *sources.Error
	retrySources := errors.As(s.lastError, &sourceErr) && s.opts.Now().Sub(s.lastTry) >= s.opts.SourceRetry
	if !force && fp == s.lastSource && !retrySources {
		return s.lastError
	}
	s.lastSource, s.lastTry = fp, s.opts.Now()
	snap, err := loadSnapshot(ctx, s.opts.ContextDir, s.verifyContext, s.opts.Outbound, s.opts.Sources)
	s.metrics.observeSources(err)
	if err != nil {
		s.lastError = err
		s.metrics.reloads.WithLabelValues("failure").Inc()
		if old := s.current.Load(); old != nil {
			s.opts.Logger.Error("Context reload failed; serving the last good context", "hash", old.hash, "error", err)
		} else {
			s.opts.Logger.Error("Context load failed", "dir", s.opts.ContextDir, "error", err)
		}
		return err
	}
	if err := s.materialize(ctx, snap); err != nil {
		s.lastError = err
		s.metrics.reloads.WithLabelValues("failure").Inc()
		s.opts.Logger.Error("Materializing the context failed; serving the last good context", "hash", snap.hash, "dir", s.opts.MaterializeDir, "error", err)
		return err
	}
	s.lastError = nil
	s.metrics.reloads.WithLabelValues("success").Inc()
	s.metrics.loaded.Set(1)
	old := s.current.Swap(snap)
	s.syncMCP(snap)
	if old == nil || old.hash != snap.hash {
		s.opts.Logger.Info("Context loaded", "hash", snap.hash, "tools", len(snap.host.Registry().Tools))
	}
	return nil
}

// materialize writes snap's tree into MaterializeDir, if set. Write makes no
// change when the tree is already current.
func (s *Server) materialize(ctx context.Context, snap *snapshot) error {
	if s.opts.MaterializeDir == "" {
		return nil
	}
	in, opts, err := snap.fetched.Materialize(s.opts.Materialize)
	if err != nil {
		return err
	}
	tree, err := materialize.Build(ctx, in, opts)
	if err != nil {
		return err
	}
	res, err := materialize.Write(s.opts.MaterializeDir, tree)
	if err != nil {
		return err
	}
	if res.Changed {
		s.opts.Logger.Info("Context materialized", "hash", snap.hash, "dir", s.opts.MaterializeDir, "generation", res.Generation)
	}
	return nil
}

// Run loads the context and then polls for changes until ctx is done. Polling
// a fingerprint of the directory works for ConfigMap volumes (the kubelet
// swaps the ..data symlink) and for plain directories alike.
func (s *Server) Run(ctx context.Context) {
	_ = s.Reload(ctx, true)
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = s.Reload(ctx, false)
		}
	}
}

// ListenAndServe serves the API on addr and reloads in the background until
// ctx is done, then shuts down gracefully.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	srv := newHTTPServer(addr, s.Handler(), s.opts.Limits)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Run(ctx)
	return serveUntilDone(ctx, srv)
}

// status reports what /readyz says: the served hash and the last reload error.
func (s *Server) status() (*snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current.Load(), s.lastError
}
