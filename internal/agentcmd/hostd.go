package agentcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/exepages"
	"github.com/loadout-dev/loadout/internal/hookwatch"
	"github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/ledgerexport"
	"github.com/loadout-dev/loadout/internal/materialize"
	"github.com/loadout-dev/loadout/internal/published"
	"github.com/loadout-dev/loadout/internal/skillsources"
)

// DefaultContextDir is where the agent-pod admission policy and the sample
// agent Deployment mount the context.
const DefaultContextDir = "/var/run/loadout/context"

// NewHostdCommand runs the agent-side extension host (docs/hostd.md); fill
// brings its external skill sources into the cache (SourceFiller).
func NewHostdCommand(fill SourceFiller) *cobra.Command {
	var (
		dir     string
		addr    string
		poll    time.Duration
		treeDir string
		// probeAddr is the second listener, for the kubelet and Prometheus.
		probeAddr  string
		socket     string
		claudeCode bool
		codex      bool
		managedEtc bool
		signKey    string
		tokenFile  string
		svcAddrs   map[string]string
		src        SourceFlags
		limits     hostd.Limits
		trust      contextTrustFlags
		srcTimeout time.Duration
		// hookWatchGrace: internal/hookwatch.
		hookWatchGrace time.Duration
		policyDir      string
		ledgerOn       bool
		ledgerFile     string
		// anchorInterval bounds how long a moved ledger head goes unsigned.
		anchorInterval time.Duration
		approvals      approvalFlags
		mcpHeaders     mcpHeadersFlags
		releasePages   bool
	)
	cmd := &cobra.Command{
		Use:   "hostd",
		Short: "Serve the mounted context and run its hooks over a localhost HTTP API",
		Long: `hostd is the agent-side extension host. Agents in any language call it around
each tool call (POST /v1/before, POST /v1/after), and to render templates
(POST /v1/render), activate skills (POST /v1/activate) and read the tool
registry (GET /v1/registry), and answers Claude Code's http hooks
(POST /v1/hooks/claude-code). It runs the registry's runnable tools
(POST /v1/tools/{name}) and serves them, with the templates as prompts, as an
MCP server (streamable HTTP at /mcp), checking arguments against each tool's input schema and running the
hooks around the tool's Service. It loads the context ConfigMap mounted at
--context-dir, reloads it when the kubelet updates it, runs CEL hooks in
process and webhook hooks over HTTP, and fails closed when a before hook
errors or times out. With --materialize OUT it also keeps OUT holding the
served context as files (see 'loadout materialize'), rewritten atomically on
every reload. A new context's hooks and deny lists apply at once; external
skills (spec.source) are fetched once per digest in the background, each
within --source-timeout, verified, and served as they arrive (a skill keeps
its previous version meanwhile); a failing source is named in /readyz and the
metrics. It loads only contexts the manager signed for the Workspace it serves
(--context-keys, --workspace; the agent-pod admission policy sets both), and
keeps the last good context when one is refused. With --policy-dir it serves a
context only while the namespace's signed policy epoch (the loadout-policy
ConfigMap) names the platform policy the context carries, and denies every
tool call and event otherwise. With --unix-socket it also
serves the API on a Unix socket. See docs/hostd.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			if err := requireLoopback(addr); err != nil {
				return err
			}
			keys, err := trust.verifier()
			if err != nil {
				return err
			}
			hostd.SetMemoryLimitFromCgroup(hostd.CgroupMemoryMax)
			fetcher, err := src.Fetcher(fill)
			if err != nil {
				return err
			}
			if managedEtc {
				if treeDir == "" {
					return errors.New("--managed-etc needs --materialize")
				}
				if codex {
					return errors.New("--managed-etc and --codex: the managed /etc layout is not CODEX_HOME; use one")
				}
				// Before the first tree: no hook names a program that is not there.
				if err := materialize.InstallHookProgram(treeDir); err != nil {
					return err
				}
			}
			led, closeLedger, err := openLedger(ledgerOn, ledgerFile, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer closeLedger()
			led, flushExport := exportLedger(ctx, led, cmd.ErrOrStderr(),
				ledgerexport.String("k8s.pod.name", os.Getenv("POD_NAME")), ledgerexport.String("loadout.workspace", trust.workspace))
			defer flushExport()
			stopAnchors, err := anchorLedger(ctx, led, anchorInterval)
			if err != nil {
				return err
			}
			defer stopAnchors()
			broker := approvals.broker(cmd.ErrOrStderr())
			srv := hostd.New(hostd.Options{Approvals: broker, HookFailureEvents: approvals.hookEvents(trust.workspace, os.Getenv("POD_NAME"), cmd.ErrOrStderr()), Ledger: led, Pod: os.Getenv("POD_NAME"), ContextDir: dir, PollInterval: poll, ContextKeys: keys, Workspace: trust.workspace, ContextConfigMap: trust.configMap,
				PolicyDir: policyDir, MaterializeDir: treeDir, Materialize: MaterializeOptions(claudeCode, codex, managedEtc, "http://"+addr),
				SigningKeyFile: signKey, ServiceTokenFile: tokenFile, ServiceAddresses: svcAddrs, SkillSources: keepSkillSources(skillsources.Options{Fetcher: fetcher, Timeout: srcTimeout}), Limits: limits, WatchHooks: func(report func(time.Time)) hostd.HookWatch { return hookwatch.New(hookWatchGrace, nil, report) },
				MCPHeaders: mcpHeaders.source(cmd.ErrOrStderr(), svcAddrs), AfterFirstLoad: releaseStartup(releasePages)})
			return serveHostd(ctx, srv, addr, socket, probeAddr)
		},
	}
	cmd.Flags().StringVar(&dir, "context-dir", DefaultContextDir, "directory where the context ConfigMap is mounted")
	cmd.Flags().StringVar(&policyDir, "policy-dir", "",
		"directory where the namespace's policy epoch (ConfigMap loadout-policy) is mounted: a context is served only while the epoch, verified with --context-keys, names the platform policy it carries (or the previous one within its grace); missing or unreadable, every tool call and event is denied. The agent-pod admission policy sets it")
	cmd.Flags().BoolVar(&ledgerOn, "ledger", true,
		"write the decision ledger: one hash-chained JSON line per verdict (tool call, event, after hooks), arguments as digests only; check it with 'loadout audit verify' (docs/hostd.md#decision-ledger)")
	cmd.Flags().StringVar(&ledgerFile, "ledger-file", "", "append the decision ledger to this file instead of stderr")
	cmd.Flags().DurationVar(&anchorInterval, "ledger-anchor-interval", DefaultLedgerAnchorInterval,
		"sign the ledger's head this often when it moved (and every 256 records, and at shutdown): the anchors 'loadout audit verify --anchors' checks a ledger copy against (docs/hostd.md#decision-ledger)")
	approvals.register(cmd.Flags())
	mcpHeaders.register(cmd.Flags())
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8181", "address to listen on; keep it on loopback")
	cmd.Flags().StringVar(&signKey, "signing-key-file", "", "file (a mounted Secret) of Standard Webhooks secrets (whsec_...) that sign every webhook and tool call for its target; see docs/hostd.md")
	cmd.Flags().StringVar(&tokenFile, "service-token-file", "",
		"projected ServiceAccount token (audience loadout.dev/hostd) presented as a bearer token on every webhook and tool call, re-read as the kubelet rotates it, so Services verify the call came through this pod's hostd (TokenReview; docs/hostd.md). The agent-pod admission policy sets it")
	cmd.Flags().StringVar(&probeAddr, "probe-addr", "",
		"second address serving only /healthz, /readyz and /metrics, e.g. :8182 for the kubelet's probes and Prometheus; empty: none")
	cmd.Flags().StringToStringVar(&svcAddrs, "service-address", nil, "dial a Service at another address, e.g. review-notes.team-a.svc:8080=127.0.0.1:9000 (repeatable; for running outside a cluster, where .svc names do not resolve)")
	cmd.Flags().StringVar(&socket, "unix-socket", "",
		"also serve the API on a Unix socket at this path (agents set LOADOUT_HOSTD_URL=unix:PATH): no TCP stack per call and unreachable from a browser; anyone who can open the path can call hostd")
	cmd.Flags().DurationVar(&poll, "poll-interval", time.Second, "how often to check the context directory for changes")
	cmd.Flags().DurationVar(&hookWatchGrace, "hook-watch-grace", hookwatch.DefaultGrace,
		"how long after an agent opens the MCP server a hook must arrive; past it the agent counts as running without the Workspace's hooks (loadout_hostd_agents_without_hooks_total, an AgentWithoutHooks Event)")
	cmd.Flags().BoolVar(&releasePages, "release-startup-pages", true,
		"once the first context is loaded, give back the pages of this binary only start-up touched (about 6 MiB of idle memory); the first calls fault back the pages they need, a few milliseconds once")
	cmd.Flags().StringVar(&treeDir, "materialize", "", "keep this directory holding the context as files agents read (skills/, prompts/, AGENTS.md)")
	cmd.Flags().DurationVar(&srcTimeout, "source-timeout", skillsources.DefaultTimeout,
		"deadline of one fetch of an external skill source; a source that does not answer in time is reported and retried, and delays nothing else")
	cmd.Flags().BoolVar(&claudeCode, "claude-code", false, "with --materialize: also write Claude Code's CLAUDE.md, commands/ and managed settings (naming this hostd's --addr)")
	cmd.Flags().BoolVar(&codex, "codex", false, "with --materialize: the Codex layout for a tree in CODEX_HOME (skills shared with Codex's own, hooks.json, requirements.toml)")
	cmd.Flags().BoolVar(&managedEtc, "managed-etc", false,
		"with --materialize: the tree a bound pod mounts read-only as /etc/claude-code and /etc/codex (Claude Code's managed settings, memory, skills and commands; Codex's requirements.toml and config.toml), its hooks running this program's copy in OUT/bin; the agent-pod admission policy sets it (docs/agents.md#every-agent-in-a-bound-pod)")
	d := hostd.DefaultLimits
	cmd.Flags().IntVar(&limits.MaxConcurrentRequests, "max-concurrent-requests", d.MaxConcurrentRequests,
		"requests with a body served at once; more wait --queue-wait, then get 503 (bounds memory: each may carry 1 MiB)")
	cmd.Flags().DurationVar(&limits.QueueWait, "queue-wait", d.QueueWait, "how long a request waits for a free slot before a 503")
	cmd.Flags().DurationVar(&limits.ReadHeaderTimeout, "read-header-timeout", d.ReadHeaderTimeout, "close a connection whose request headers take longer")
	cmd.Flags().DurationVar(&limits.ReadTimeout, "read-timeout", d.ReadTimeout, "close a connection whose whole request (body included) takes longer; a trickled body cannot hold a slot past it")
	cmd.Flags().DurationVar(&limits.IdleTimeout, "idle-timeout", d.IdleTimeout, "close keep-alive connections idle this long")
	cmd.Flags().IntVar(&limits.MCPMaxSessions, "mcp-max-sessions", d.MCPMaxSessions,
		"MCP sessions open at once on /mcp; a client opening one more gets 503 with a JSON-RPC error until a session ends (DELETE) or idles out (bounds memory: each session is held until then)")
	cmd.Flags().DurationVar(&limits.MCPSessionIdleTimeout, "mcp-session-idle-timeout", d.MCPSessionIdleTimeout,
		"close an MCP session that received no request for this long (a client that went away without ending it); its client must initialize again")
	src.Add(cmd)
	trust.add(cmd, true)
	return cmd
}

// releaseStartup gives back, once the first context is served, what start-up
// alone used: the heap's free pages (hostd.ReleaseStartupMemory) and, with
// pages, the pages of the binary that only initialisation touched
// (exepages): about 6 MiB of an idle sidecar, for about a hundred minor
// faults on the first call (docs/benchmarks.md).
func releaseStartup(pages bool) func() {
	return func() {
		hostd.ReleaseStartupMemory()
		if pages {
			exepages.Release()
		}
	}
}

// keepSkillSources hands hostd a skillsources.Keeper over opts (the
// fetcher of the source flags, --source-timeout) for its external skills;
// hostd supplies its lock, logger, failure counter and what to do when a
// source arrives.
func keepSkillSources(opts skillsources.Options) func(hostd.SourceHooks) hostd.SkillSources {
	return func(h hostd.SourceHooks) hostd.SkillSources {
		opts.Lock, opts.Logger, opts.Failed, opts.Arrived = h.Lock, h.Logger, h.Failed, h.Arrived
		return skillsources.New(opts)
	}
}

// contextTrustFlags say which contexts hostd may load: those the manager
// signed for this Workspace (docs/security.md).
type contextTrustFlags struct {
	keys, keysFile, workspace, configMap string
	allowUnsigned                        bool
}

func (f *contextTrustFlags) add(cmd *cobra.Command, allowUnsigned bool) {
	cmd.Flags().StringVar(&f.keys, "context-keys", os.Getenv("LOADOUT_CONTEXT_KEYS"),
		"trust anchor: the manager's public keys, one \"ed25519 <base64>\" per line (default $LOADOUT_CONTEXT_KEYS, which the agent-pod admission policy sets); a context loads only if one of them signed it")
	cmd.Flags().StringVar(&f.keysFile, "context-keys-file", "", "read the trust anchor from this file instead")
	cmd.Flags().StringVar(&f.workspace, "workspace", os.Getenv("LOADOUT_WORKSPACE"),
		"NAMESPACE/NAME of the Workspace this host serves (default $LOADOUT_WORKSPACE); a context signed for another Workspace is refused")
	cmd.Flags().StringVar(&f.configMap, "context-configmap", os.Getenv("LOADOUT_CONTEXT_CONFIGMAP"),
		"name of the mounted context ConfigMap (default $LOADOUT_CONTEXT_CONFIGMAP, else <workspace name>-context); a context signed for another ConfigMap is refused")
	if allowUnsigned {
		cmd.Flags().BoolVar(&f.allowUnsigned, "allow-unsigned-context", false,
			"load contexts without checking their signature (local development with `loadout preview` output only: anyone who can write the context directory then decides the policy)")
	}
}

// verifier returns the trust anchor, or nil when unsigned contexts are
// explicitly allowed. Neither is an error: a host that would load any
// context must be asked for.
func (f *contextTrustFlags) verifier() (*contextsig.Verifier, error) {
	text := f.keys
	if f.keysFile != "" {
		b, err := os.ReadFile(f.keysFile)
		if err != nil {
			return nil, fmt.Errorf("--context-keys-file: %w", err)
		}
		text = string(b)
	}
	switch {
	case strings.TrimSpace(text) != "":
		v, err := contextsig.ParseTrustAnchor(text)
		if err != nil {
			return nil, fmt.Errorf("--context-keys: %w", err)
		}
		// Keys alone say who signed a context, not for whom: a host that
		// does not know its Workspace would load one signed for any
		// Workspace and any ConfigMap.
		if strings.TrimSpace(f.workspace) == "" {
			return nil, errors.New("--context-keys without --workspace: set --workspace (or $LOADOUT_WORKSPACE) to NAMESPACE/NAME " +
				"of the Workspace this host serves; with the keys alone a context the manager signed for any Workspace would load")
		}
		if err := hostd.CheckWorkspace(f.workspace); err != nil {
			return nil, fmt.Errorf("--workspace: %w", err)
		}
		return v, nil
	case f.allowUnsigned:
		return nil, nil
	}
	return nil, errors.New("no trust anchor: set --context-keys (or $LOADOUT_CONTEXT_KEYS, or --context-keys-file) to the manager's public keys " +
		"(ConfigMap loadout-system/loadout-hostd, key contextKeys), or pass --allow-unsigned-context for local development")
}

// ContextTrust is the trust flags of a command that reads a mounted context
// once (`loadout materialize`): --context-keys, --context-keys-file,
// --workspace and --context-configmap, with hostd's defaults from the
// environment. Given keys, the context must verify as hostd would verify
// it; without keys nothing is checked (local development).
type ContextTrust struct{ f contextTrustFlags }

// Add registers the flags on cmd.
func (t *ContextTrust) Add(cmd *cobra.Command) { t.f.add(cmd, false) }

// Verify refuses pc unless the manager signed it for the Workspace and
// ConfigMap of the flags, when keys are given (hostd.VerifyContext).
func (t *ContextTrust) Verify(pc *published.Context) error {
	if strings.TrimSpace(t.f.keys) == "" && t.f.keysFile == "" {
		return nil
	}
	keys, err := t.f.verifier()
	if err != nil {
		return err
	}
	return hostd.VerifyContext(keys, t.f.workspace, t.f.configMap, pc)
}

// serveHostd serves the API on addr and, when set, on the Unix socket and
// the probes on probeAddr; the first to fail stops them all.
func serveHostd(ctx context.Context, srv *hostd.Server, addr, socket, probeAddr string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serving := []func() error{func() error { return srv.ListenAndServe(ctx, addr) }}
	if socket != "" {
		serving = append(serving, func() error {
			if err := srv.ServeUnixSocket(ctx, socket); err != nil {
				return fmt.Errorf("--unix-socket=%s: %w", socket, err)
			}
			return nil
		})
	}
	if probeAddr != "" {
		serving = append(serving, func() error {
			if err := srv.ListenAndServeProbes(ctx, probeAddr); err != nil {
				return fmt.Errorf("--probe-addr=%s: %w", probeAddr, err)
			}
			return nil
		})
	}
	errc := make(chan error, len(serving))
	for _, serve := range serving {
		go func() { errc <- serve() }()
	}
	errs := []error{<-errc}
	cancel()
	for range serving[1:] {
		errs = append(errs, <-errc)
	}
	return errors.Join(errs...)
}

// requireLoopback refuses an API address other hosts could reach: the /v1
// API has no authentication (use --probe-addr for the kubelet and Prometheus).
func requireLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr=%q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("--addr=%q: the hostd API has no authentication and must listen on loopback (127.0.0.1 or ::1); "+
		"serve probes and metrics on the pod IP with --probe-addr", addr)
}

// openLedger opens the decision ledger hostd writes: stderr, or file
// (appended, created 0600); nil when off.
func openLedger(on bool, file string, stderr io.Writer) (*ledger.Writer, func(), error) {
	switch {
	case !on:
		return nil, func() {}, nil
	case file == "":
		return ledger.NewWriter(stderr), func() {}, nil
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--ledger-file: %w", err)
	}
	return ledger.NewWriter(f), func() { _ = f.Close() }, nil
}
