package hostd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout-dev/loadout/internal/approval"
	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/httpserve"
	"github.com/loadout-dev/loadout/internal/keptresult"
	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/promtext"
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
	// ContextConfigMap is the name of the mounted context ConfigMap; a
	// context signed for another name (a copy, say an old one replayed to
	// roll policy back) is refused. Empty: "<workspace name>-context". Only
	// checked with Workspace set.
	ContextConfigMap string
	// PollInterval is how often the directory is checked for a new context.
	// Zero means one second.
	PollInterval time.Duration
	// SigningKeyFile is a mounted Secret of Standard Webhooks secrets; when
	// set, every webhook and tool call is signed with it for its target
	// (outbound.Sign, docs/hostd.md).
	SigningKeyFile string
	// ServiceTokenFile is a projected ServiceAccount token (audience
	// toolauth.Audience) that the kubelet rotates; when set, every webhook
	// and tool call presents it as a bearer token, so the Service can verify
	// with a TokenReview that it came from this pod's hostd
	// (outbound.Options.ServiceTokenFile, docs/hostd.md).
	ServiceTokenFile string
	// ServiceAddresses dials Service host:port pairs at local addresses
	// (outbound.Options.Addresses), for running outside a cluster.
	ServiceAddresses map[string]string
	// Outbound calls webhook hooks; nil means an outbound.Client (no
	// redirects, signed with SigningKeyFile), bounded by each hook's timeout.
	Outbound outbound.Doer
	// MCPHeaders gives the headers of MCP servers whose Extension sends
	// headers from a Secret (the manager's endpoint, mcpheaders.Fetcher);
	// nil blocks every call to such a server, naming why.
	MCPHeaders mcpclient.HeaderSource
	// Now stamps rendered messages; nil means time.Now.
	Now func() time.Time
	// Logger receives reload events; nil means slog.Default().
	Logger *slog.Logger
	// MaterializeDir, when set, is kept holding the served context as the
	// files agents read (internal/materialize). The tree follows the served
	// context and never holds its policy back: a tree that cannot be written
	// (OUT tampered with, a full disk) makes /readyz answer 503 with the
	// reason while the new context serves, and is tried again every poll.
	MaterializeDir string
	// Materialize configures that tree (content source, Claude Code layout).
	Materialize materialize.Options
	// SkillSources, when set, makes what keeps the external skills
	// (docs/concepts.md): internal/skillsources, which `loadout hostd`
	// wires in with its fetcher and --source-timeout; hostd hands it its
	// lock and what to do when a source arrives (SourceHooks). nil: no
	// external skill is fetched; each is reported failing, saying why.
	SkillSources func(SourceHooks) SkillSources
	// Limits bound the API listener's connections (zero fields: DefaultLimits).
	Limits Limits
	// PolicyDir is the mounted policy epoch of the Workspace's namespace
	// (the loadout-policy ConfigMap, docs/hostd.md "Policy epoch"). When
	// set, a context is served only while the epoch, verified with
	// ContextKeys, names the platform policy it carries; otherwise every
	// tool call and event is denied and /readyz answers 503. A missing or
	// unreadable epoch refuses every context.
	PolicyDir string
	// Ledger, when set, receives one record per verdict (docs/hostd.md,
	// "Decision ledger"); nil records nothing.
	Ledger *ledger.Writer
	// Pod names this pod in ledger records (POD_NAME); may be empty.
	Pod string
	// Approvals, when set, takes the asks of imposed hooks with an approval
	// to the cluster (docs/hooks.md, "Approvals"); nil blocks them.
	Approvals *approval.Broker
	// HookFailureEvents, when set, makes the reporter that turns hook
	// failures into Kubernetes Events on the Workspace (internal/hookevents,
	// which `loadout hostd` wires in); hostd hands it the counter of what
	// became of each. nil: failures are logged and counted only.
	HookFailureEvents func(observe func(outcome string)) FailureReporter
	// WatchHooks, when set, makes the watch that tells of an agent that
	// opens hostd's MCP server but calls no hook (internal/hookwatch, which
	// `loadout hostd` wires in); hostd hands it what to do then (count, log
	// and report: agentWithoutHooks). nil: no watch.
	WatchHooks func(report func(since time.Time)) HookWatch
	// AfterFirstLoad, when set, is called once by Run after the first
	// context load (served or refused). `loadout hostd` returns the
	// start-up garbage to the OS there (ReleaseStartupMemory).
	AfterFirstLoad func()
}

// Server serves one Workspace's context and hooks over HTTP.
type Server struct {
	opts    Options
	current atomic.Pointer[snapshot]
	// ready is what /readyz reports, published under mu and read without
	// it, so a probe never waits on a reload.
	ready   atomic.Pointer[readiness]
	metrics *metrics
	// hookWatch tells of an agent that opens the MCP server but calls no
	// hook (agentWithoutHooks).
	hookWatch HookWatch
	limits    *limiter
	mux       *http.ServeMux
	mcp       *mcpTools
	// skills keeps the served context's external skills; guarded by mu.
	skills SkillSources
	// serial runs a serial tool's calls one at a time; kept holds the
	// whole answers of truncated calls for a while.
	serial *serialGates
	kept   *keptresult.Store

	// approvalStates counts the outcomes of asks taken to the cluster.
	approvalStates *promtext.CounterVec

	// refused, when set, is why the served context is not served: the
	// namespace's policy epoch does not accept its platform policy.
	refused atomic.Pointer[refusal]

	mu         sync.Mutex // guards the fields below and serialises reloads
	lastSource fingerprint
	lastPolicy fingerprint
	// epoch is the policy epoch last read from PolicyDir.
	epoch policyEpoch
	// loadErr is why the newest context did not load (the last good one
	// serves); treeErr is why MaterializeDir does not hold the served one.
	loadErr error
	treeErr error
	// tree is the served context's built tree, written again every poll
	// while treeErr is set.
	tree *materialize.Tree
}

// readiness is a consistent picture of the Server's health for /readyz.
type readiness struct {
	// published is set once a load has been served in full (MCP tools and
	// tree included): the context is swapped in before the tree is written,
	// so until then a served context does not mean a written tree.
	published bool
	loadErr   error
	treeErr   error
	sources   []SourceStatus
}

// New returns a Server. Call Reload (or Run) to load the context; until one
// load succeeds, /readyz and the /v1 endpoints answer 503.
func New(opts Options) *Server {
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.Outbound == nil {
		opts.Outbound = outbound.New(outbound.Options{SigningKeyFile: opts.SigningKeyFile, ServiceTokenFile: opts.ServiceTokenFile,
			Addresses: opts.ServiceAddresses})
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Limits = opts.Limits.withDefaults()
	s := &Server{opts: opts, metrics: newMetrics(), limits: newLimiter(opts.Limits),
		serial: newSerialGates(), kept: keptresult.New(opts.Now)}
	s.mcp = s.newMCPServer("v1alpha1")
	if err := s.registerMCPSkills(); err != nil {
		panic(err) // the extension's method names are fixed: never a standard method
	}
	if opts.HookFailureEvents != nil {
		s.metrics.failureEvents = opts.HookFailureEvents(func(outcome string) { s.metrics.failureEventOutcomes.WithLabelValues(outcome).Inc() })
	}
	s.skills = &noSkillSources{}
	if opts.SkillSources != nil {
		s.skills = opts.SkillSources(SourceHooks{Lock: &s.mu, Logger: opts.Logger, Failed: s.metrics.sourceFailures.Inc, Arrived: s.sourceArrived})
	}
	s.hookWatch = noHookWatch{}
	if opts.WatchHooks != nil {
		s.hookWatch = opts.WatchHooks(s.agentWithoutHooks)
	}
	s.metrics.failureLog = &failureLog{logger: opts.Logger, hash: func() string {
		if snap := s.current.Load(); snap != nil {
			return snap.hash
		}
		return ""
	}}
	if opts.Ledger != nil {
		s.useLedger(opts.Ledger)
	}
	s.useApprovals()
	s.ready.Store(&readiness{})
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
//
// A loaded context's hooks and deny lists apply at once: nothing here waits
// on the network. The external skill sources it pins are fetched in the
// background (SkillSources.Fetch), each within its deadline, and their skills
// follow as they arrive. Every call, changed or not, also retries the failed
// sources that are due and a tree that could not be written.
func (s *Server) Reload(ctx context.Context, force bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fp, pfp := takeFingerprint(s.opts.ContextDir), s.policyFingerprint()
	if !force && fp == s.lastSource && pfp == s.lastPolicy {
		s.retry(ctx)
		s.judgeServed() // the previous policy's grace may have run out
		return errors.Join(s.loadErr, s.treeErr, s.policyRefused())
	}
	if s.opts.PolicyDir != "" && (force || pfp != s.lastPolicy || s.epoch == (policyEpoch{})) {
		s.epoch = loadEpoch(s.opts.PolicyDir, s.opts.ContextKeys)
	}
	s.lastSource, s.lastPolicy = fp, pfp
	snap, err := loadSnapshot(ctx, s.opts.ContextDir, s.verifyContext, s.opts.Outbound, s.opts.MCPHeaders)
	if err != nil {
		s.judgeServed()
		s.loadErr = err
		s.metrics.reloads.WithLabelValues("failure").Inc()
		if old := s.current.Load(); old != nil {
			s.opts.Logger.Error("Context reload failed; serving the last good context", "hash", old.hash, "error", err)
		} else {
			s.opts.Logger.Error("Context load failed", "dir", s.opts.ContextDir, "error", err)
		}
		s.publishStatus()
		return err
	}
	s.loadErr = nil
	s.metrics.reloads.WithLabelValues("success").Inc()
	s.metrics.loaded.Set(1)
	if old := s.current.Load(); old == nil || old.hash != snap.hash {
		s.opts.Logger.Info("Context loaded", "hash", snap.hash, "tools", len(snap.host.Registry().Tools))
	}
	return s.serve(ctx, snap)
}

// serve makes snap current with the external content hostd holds (the swap
// comes first: the tree never holds policy back), then brings the MCP tools
// and the tree along and starts the fetches snap still needs. The caller
// holds s.mu.
func (s *Server) serve(ctx context.Context, snap *snapshot) error {
	next := *snap
	next.context, next.content = s.skills.Serve(snap.published)
	s.current.Store(&next)
	s.judgeServed()
	s.syncMCP(ctx, &next)
	s.treeErr = s.materialize(ctx, &next)
	s.skills.Fetch(ctx)
	s.publishStatus()
	return s.treeErr
}

// retry starts the due fetches of failed sources and writes the tree again
// if it could not be written (an agent may have moved its obstacle away).
// The caller holds s.mu.
func (s *Server) retry(ctx context.Context) {
	cur := s.current.Load()
	if cur == nil {
		return
	}
	s.skills.Fetch(ctx)
	switch {
	case s.treeErr == nil:
	case s.tree == nil:
		s.treeErr = s.materialize(ctx, cur)
	default:
		s.treeErr = s.writeTree(cur.hash)
	}
	s.publishStatus()
}

// materialize builds snap's tree and writes it into MaterializeDir, if set.
// A skill whose content has not arrived is left out until it does.
func (s *Server) materialize(ctx context.Context, snap *snapshot) error {
	if s.opts.MaterializeDir == "" {
		return nil
	}
	s.tree = nil
	in, err := materialize.InputFrom(snap.context)
	if err != nil {
		return s.treeFailed(snap.hash, err)
	}
	in.Skills = slices.DeleteFunc(in.Skills, func(sk contract.SkillDoc) bool { return !snap.context.Holds(sk.Name) })
	opts := s.opts.Materialize
	opts.Source = snap.content
	tree, err := materialize.Build(ctx, in, opts)
	if err != nil {
		return s.treeFailed(snap.hash, err)
	}
	s.tree = tree
	return s.writeTree(snap.hash)
}

// writeTree writes the built tree; Write changes nothing when OUT already
// holds it.
func (s *Server) writeTree(hash string) error {
	res, err := materialize.Write(s.opts.MaterializeDir, s.tree)
	if err != nil {
		return s.treeFailed(hash, err)
	}
	if res.Changed {
		s.opts.Logger.Info("Context materialized", "hash", hash, "dir", s.opts.MaterializeDir, "generation", res.Generation)
	}
	s.metrics.treeCurrent.Set(1)
	return nil
}

// treeFailed records a tree that could not be brought to the served
// context: counted, logged when the reason changes, reported by /readyz.
func (s *Server) treeFailed(hash string, err error) error {
	s.metrics.treeCurrent.Set(0)
	s.metrics.treeFailures.Inc()
	if s.treeErr == nil || s.treeErr.Error() != err.Error() {
		s.opts.Logger.Error("Materializing the context failed; its policy applies and the tree is retried every poll",
			"hash", hash, "dir", s.opts.MaterializeDir, "error", err)
	}
	return err
}

// publishStatus publishes what /readyz and the source metrics say. The
// caller holds s.mu.
func (s *Server) publishStatus() {
	r := &readiness{loadErr: s.loadErr, treeErr: s.treeErr}
	if cur := s.current.Load(); cur != nil {
		r.published = true
		r.sources = s.sourceStatuses()
	}
	s.ready.Store(r)
	s.metrics.observeSources(r.sources)
}

// Run loads the context and then polls for changes until ctx is done. Polling
// a fingerprint of the directory works for ConfigMap volumes (the kubelet
// swaps the ..data symlink) and for plain directories alike.
func (s *Server) Run(ctx context.Context) {
	defer s.wait()
	if r := s.metrics.failureEvents; r != nil {
		go r.Run(ctx)
	}
	go s.hookWatch.Run(ctx)
	_ = s.Reload(ctx, true)
	warmWire()
	if s.opts.AfterFirstLoad != nil {
		s.opts.AfterFirstLoad()
	}
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
	return httpserve.UntilDone(ctx, srv, srv.ListenAndServe)
}

// ServeUnixSocket serves the same API, with the same limits and checks, on
// a Unix socket at path until ctx is done; ListenAndServe reloads. A socket
// skips the loopback TCP stack (a lower tail per call, docs/benchmarks.md)
// and no browser can reach it. Whoever can open path can call hostd, as any
// process in the pod can reach the loopback address, so the socket is
// created read-write for all (the agent's container may run as another
// user); keep it in a volume only the pod mounts. A stale socket left at path
// is replaced; any other file there is an error.
func (s *Server) ServeUnixSocket(ctx context.Context, path string) error {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return fmt.Errorf("%s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "unix", path)
	if err != nil {
		return err
	}
	if err := os.Chmod(path, 0o666); err != nil {
		_ = ln.Close()
		return err
	}
	srv := newHTTPServer("", s.Handler(), s.opts.Limits)
	return httpserve.UntilDone(ctx, srv, func() error { return srv.Serve(ln) })
}

// status reports what /readyz says: the served context and its health. It
// takes no lock: a reload in progress never delays a probe.
func (s *Server) status() (*snapshot, *readiness) {
	return s.current.Load(), s.ready.Load()
}

// HookWatch watches for an agent that opens hostd's MCP server (MCPSession)
// and calls no hook (Hooked) within Grace; Run checks until ctx is done.
type HookWatch interface {
	MCPSession()
	Hooked()
	Grace() time.Duration
	Run(ctx context.Context)
}

// noHookWatch is the watch of a hostd that was given none.
type noHookWatch struct{}

func (noHookWatch) MCPSession()             {}
func (noHookWatch) Hooked()                 {}
func (noHookWatch) Grace() time.Duration    { return 0 }
func (noHookWatch) Run(ctx context.Context) {}

// agentWithoutHooks is hookWatch's report: an agent opened the MCP server
// at since and called no hook within the grace. It is counted, logged and
// raised as an Event on the Workspace (docs/security.md, "Server-managed
// settings displace the managed hooks").
func (s *Server) agentWithoutHooks(since time.Time) {
	s.metrics.agentsWithoutHooks.Inc()
	if l := s.opts.Logger; l != nil {
		l.Warn("an agent opened hostd's MCP server and called no hook: it runs without the Workspace's hooks",
			"since", since, "grace", s.hookWatch.Grace())
	}
	if r := s.metrics.failureEvents; r != nil {
		r.ReportAgentWithoutHooks(since, s.hookWatch.Grace())
	}
}
