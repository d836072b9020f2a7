// Command manager runs the Loadout controllers: it resolves every Workspace's
// context and tool registry and publishes them as ConfigMaps.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/apiconn"
	"github.com/loadout-dev/loadout/internal/buildinfo"
	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/managerlog"
	"github.com/loadout-dev/loadout/internal/mcpheaders"
	mcpendpoint "github.com/loadout-dev/loadout/internal/mcpheaders/endpoint"
	"github.com/loadout-dev/loadout/internal/metricsauth"
	"github.com/loadout-dev/loadout/internal/shard"
	"github.com/loadout-dev/loadout/internal/toolauth"
	"github.com/loadout-dev/loadout/internal/workspace"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}

// options are the manager's flags.
type options struct {
	platformNamespaces      string
	defaultTrust            string
	leaderElection          bool
	leaderElectionNamespace string
	metricsAddr             string
	metricsSecure           bool
	metricsCertDir          string
	metricsPerWorkspace     bool
	probeAddr               string
	watchNamespaces         string
	version                 bool
	maxConcurrentReconciles int
	reconcileTimeout        time.Duration
	kubeAPIQPS              float64
	kubeAPIBurst            int
	kubeAPICompression      bool
	namespace               string
	signingSecret           string
	hostdConfigMap          string
	hostdImage              string
	policyGrace             time.Duration
	mcpResync               time.Duration
	mcpHeadersAddr          string
	mcpHeadersService       string
	mcpHeadersTLSSecret     string
	claudeCodeBaseURL       string
	shard                   shardOptions
}

func parseFlags(args []string) (*options, zap.Options, error) {
	o := &options{}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: manager [flags]

Runs the Loadout controllers against the cluster of the in-cluster config or
$KUBECONFIG. For each Workspace it resolves skills, templates and instructions
across ordered roots, loads the extensions its namespaces trust, and
server-side applies one context ConfigMap (see docs/).

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.platformNamespaces, "platform-namespace", "loadout-system",
		"Comma-separated platform namespaces. Their resources are admin-owned; every Workspace may use them as roots. Each counts only with a loadout.dev/trust label (normally trusted), which only trust admins may set; without one it is untrusted.")
	fs.StringVar(&o.defaultTrust, "default-trust", string(vocab.TrustRestricted),
		"Trust level of project namespaces without a valid loadout.dev/trust label: untrusted, restricted or trusted.")
	fs.BoolVar(&o.leaderElection, "leader-elect", false,
		"Elect a leader so that only one replica reconciles at a time.")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"Namespace of the leader election Lease (default: --namespace, the manager's own namespace, in a pod or not).")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443",
		"Address of the Prometheus metrics endpoint; \"0\" disables it.")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS to callers the API server authenticates (TokenReview) and authorizes (SubjectAccessReview: get on the /metrics non-resource URL). false serves plain HTTP to anyone.")
	fs.StringVar(&o.metricsCertDir, "metrics-cert-dir", "",
		"Directory with tls.crt and tls.key for the metrics endpoint; empty generates a self-signed certificate at start.")
	fs.BoolVar(&o.metricsPerWorkspace, "metrics-per-workspace", false,
		"Also export metrics labelled with each Workspace's namespace and name; off, a scraper cannot enumerate tenants' Workspaces.")
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", "",
		"Comma-separated namespaces to watch (the platform namespaces are always added); empty watches every namespace. With a list, the manager needs Roles in those namespaces only, plus read access to Namespaces (docs/install.md).")
	fs.BoolVar(&o.version, "version", false, "Print the version, commit and build date, and exit.")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081",
		"Address of the /healthz and /readyz probes.")
	fs.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 4,
		"Workspaces reconciled in parallel.")
	fs.DurationVar(&o.reconcileTimeout, "reconcile-timeout", 2*time.Minute,
		"Upper bound of one Workspace reconcile; a pass that exceeds it fails and is retried.")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 50, "Client-side rate limit of the manager's requests to the API server, per second: one budget for all of them (shard Lease renewals have their own).")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 100, "Burst above --kube-api-qps.")
	fs.BoolVar(&o.kubeAPICompression, "kube-api-compression", false,
		"Ask the API server for gzip-compressed lists and watch streams. Off, every open watch saves its gzip reader (about 40 KiB) and both ends the CPU; turn it on only where the manager reaches the API server over a slow link.")
	fs.StringVar(&o.namespace, "namespace", defaultNamespace(),
		"The manager's own namespace, which holds its signing keys and the hostd configuration (default: $POD_NAMESPACE, else the in-cluster ServiceAccount's namespace, else loadout-system).")
	fs.StringVar(&o.signingSecret, "signing-secret", controllers.DefaultSigningSecret,
		"Secret in --namespace holding the Ed25519 keys every published context is signed with (one PKCS #8 PEM key per data entry; created with one new key if missing). Add a key and restart to rotate (docs/security.md).")
	fs.StringVar(&o.hostdConfigMap, "hostd-configmap", controllers.DefaultHostdConfigMap,
		"ConfigMap in --namespace the manager writes for the agent-pod admission policies: the hostd image and the trust anchor (the signing keys' public keys).")
	fs.StringVar(&o.hostdImage, "hostd-image", "ghcr.io/loadout-dev/loadout-hostd:"+buildinfo.Get().Version,
		"Image of the hostd sidecar the admission policy injects into agent pods (the Dockerfile's target hostd: /loadout-hostd and its fetch helper /loadout-fetch).")
	fs.DurationVar(&o.policyGrace, "policy-grace", controllers.DefaultPolicyGrace,
		"How long a namespace's policy epoch (ConfigMap loadout-policy) keeps accepting the platform policy it replaced, so agents' context and epoch volumes may update in either order; a context still carrying the old policy after it is denied by hostd.")
	fs.DurationVar(&o.mcpResync, "mcp-resync", controllers.DefaultMCPResync,
		"How often the tools of each Extension's MCP server are listed again: a tool added, changed or removed on the server reaches the Workspaces within it.")
	fs.StringVar(&o.mcpHeadersAddr, "mcp-headers-bind-address", fmt.Sprintf(":%d", mcpheaders.DefaultPort),
		"Address of the HTTPS endpoint that gives hostd the headers of platform Extensions' MCP servers (spec.mcpServer.headersFrom), to a pod-bound token of audience "+mcpheaders.Audience+" only (docs/security.md); \"0\" disables it, and such servers' calls are then blocked.")
	fs.StringVar(&o.mcpHeadersService, "mcp-headers-service", mcpendpoint.DefaultService,
		"Service in --namespace in front of the MCP headers endpoint: hostd calls https://NAME.NAMESPACE.svc:PORT"+mcpheaders.Path+" (PORT: the bind address's), and the endpoint's certificate names it.")
	fs.StringVar(&o.mcpHeadersTLSSecret, "mcp-headers-tls-secret", mcpendpoint.DefaultTLSSecret,
		"Secret in --namespace holding the MCP headers endpoint's self-signed certificate (created if missing; published to hostd in --hostd-configmap). Delete it and restart to rotate, then re-create agent pods.")
	fs.StringVar(&o.claudeCodeBaseURL, "claude-code-base-url", "",
		"The platform's model gateway for Claude Code in bound pods (http or https, not api.anthropic.com): admission sets ANTHROPIC_BASE_URL to it in every agent container, so no session there fetches its organisation's server-managed settings, which would displace Loadout's managed hooks (docs/security.md). Empty: agents choose their own endpoint.")
	o.shard.bind(fs)
	zopts := zap.Options{}
	zopts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, zopts, err
	}
	switch vocab.TrustLevel(o.defaultTrust) {
	case vocab.TrustUntrusted, vocab.TrustRestricted, vocab.TrustTrusted:
	default:
		return nil, zopts, fmt.Errorf("--default-trust=%q: must be untrusted, restricted or trusted", o.defaultTrust)
	}
	if o.claudeCodeBaseURL != "" {
		if err := controllers.CheckClaudeCodeBaseURL(o.claudeCodeBaseURL); err != nil {
			return nil, zopts, fmt.Errorf("--claude-code-base-url: %w", err)
		}
	}
	return o, zopts, nil
}

func (o *options) platform() []string { return splitList(o.platformNamespaces) }

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// cacheOptions drops the managed fields of cached typed objects
// (controllers.StripManagedFields) and limits the cache to
// --watch-namespaces plus the platform namespaces (whose resources every
// Workspace may read) when the list is set. Cluster-scoped objects (Namespaces, for their trust labels) are still
// watched cluster-wide: controller-runtime applies DefaultNamespaces to
// namespaced kinds only.
func (o *options) cacheOptions() cache.Options {
	opts := cache.Options{DefaultTransform: controllers.StripManagedFields}
	watch := splitList(o.watchNamespaces)
	if len(watch) == 0 {
		return opts
	}
	opts.DefaultNamespaces = map[string]cache.Config{}
	for _, ns := range append(watch, o.platform()...) {
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	return opts
}

// metricsOptions serves metrics over HTTPS to callers the API server
// authenticates and authorizes (internal/metricsauth) unless
// --metrics-secure=false.
func (o *options) metricsOptions() metricsserver.Options {
	opts := metricsserver.Options{BindAddress: o.metricsAddr}
	if o.metricsSecure {
		opts.SecureServing = true
		opts.FilterProvider = metricsauth.WithAuthenticationAndAuthorization
		opts.CertDir = o.metricsCertDir
	}
	return opts
}

func run() error {
	o, zopts, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if o.version {
		fmt.Println("manager", buildinfo.Get())
		return nil
	}
	ctrl.SetLogger(managerlog.New(zopts))

	scheme := kubescheme.NewManager()

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	apiconn.Configure(cfg, apiconn.Options{QPS: float32(o.kubeAPIQPS), Burst: o.kubeAPIBurst, Compression: o.kubeAPICompression})
	ctx := ctrl.SetupSignalHandler()
	owner, err := o.shard.ownership(o.platform())
	if err != nil {
		return err
	}
	mopts := o.managerOptions(scheme)
	leaseNamespace := mopts.LeaderElectionNamespace
	if err := o.shard.configure(ctx, owner, cfg, &mopts, leaseNamespace); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := setup(ctx, mgr, o, owner); err != nil {
		return err
	}
	if owner != nil {
		w, err := owner.NewWatcher(cfg, leaseNamespace)
		if err != nil {
			return err
		}
		if err := mgr.Add(w); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	ctrl.Log.WithName("setup").Info("Starting manager", "version", buildinfo.Get().Version, "commit", buildinfo.Get().Commit,
		"platformNamespaces", o.platform(), "defaultTrust", o.defaultTrust, "watchNamespaces", splitList(o.watchNamespaces))
	return mgr.Start(ctx)
}

// defaultNamespace is where the manager runs: $POD_NAMESPACE (the Downward
// API), the in-cluster ServiceAccount's namespace, or loadout-system.
// managerOptions are the controller-runtime options the flags give. The
// leader election Lease lives in the manager's own namespace unless told
// otherwise, in a pod or not: controller-runtime alone would refuse
// --leader-elect outside a pod without --leader-election-namespace.
func (o *options) managerOptions(scheme *runtime.Scheme) ctrl.Options {
	return ctrl.Options{
		Scheme:                  scheme,
		MapperProvider:          apiconn.NewMapper,
		Metrics:                 o.metricsOptions(),
		Cache:                   o.cacheOptions(),
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElection,
		LeaderElectionID:        controllers.LeaderElectionID,
		LeaderElectionNamespace: cmp.Or(o.leaderElectionNamespace, o.namespace),
	}
}

func defaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b))
	}
	return "loadout-system"
}

// signer loads (on first start: creates) the context signing keys and
// publishes their public keys for the agent-pod admission policies. It runs
// before the manager starts, with a client that reads past the cache.
func signer(ctx context.Context, mgr ctrl.Manager, o *options) (*contextsig.Signer, error) {
	// The manager's mapper and connection: a client of its own would map
	// through discovery again (apiconn.NewMapper).
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()})
	if err != nil {
		return nil, err
	}
	s, err := controllers.LoadSigningKeys(ctx, c, types.NamespacedName{Namespace: o.namespace, Name: o.signingSecret})
	if err != nil {
		return nil, err
	}
	hc := controllers.HostdConfig{Image: o.hostdImage, Signer: s, ClaudeCodeBaseURL: o.claudeCodeBaseURL}
	if o.mcpHeadersAddr != "0" {
		if err := o.mcpHeadersEndpoint(ctx, mgr, c, &hc); err != nil {
			return nil, err
		}
	}
	if err := controllers.PublishHostdConfigWith(ctx, c, types.NamespacedName{Namespace: o.namespace, Name: o.hostdConfigMap}, hc); err != nil {
		return nil, err
	}
	ctrl.Log.WithName("setup").Info("Signing contexts", "secret", o.namespace+"/"+o.signingSecret, "keys", s.KeyIDs())
	return s, nil
}

// setup registers every Loadout controller with the manager.
func setup(ctx context.Context, mgr ctrl.Manager, o *options, owner *shard.Ownership) error {
	s, err := signer(ctx, mgr, o)
	if err != nil {
		return err
	}
	_, err = controllers.Setup(ctx, mgr, controllers.Options{
		Signer:                  s,
		Policy:                  workspace.Policy{PlatformNamespaces: o.platform(), DefaultTrust: vocab.TrustLevel(o.defaultTrust)},
		ReconcileTimeout:        o.reconcileTimeout,
		MaxConcurrentReconciles: o.maxConcurrentReconciles,
		PerWorkspaceMetrics:     o.metricsPerWorkspace,
		Shard:                   owner,
		PolicyGrace:             o.policyGrace,
		MCP:                     controllers.MCPDiscovery{Resync: o.mcpResync},
	})
	return err
}

// mcpHeadersEndpoint loads (on first start: creates) the MCP headers
// endpoint's certificate, adds the endpoint to the manager, and fills in
// where hostd reaches it.
func (o *options) mcpHeadersEndpoint(ctx context.Context, mgr ctrl.Manager, c client.Client, hc *controllers.HostdConfig) error {
	_, port, err := net.SplitHostPort(o.mcpHeadersAddr)
	if err != nil {
		return fmt.Errorf("--mcp-headers-bind-address=%q: %w", o.mcpHeadersAddr, err)
	}
	host := o.mcpHeadersService + "." + o.namespace + ".svc"
	cert, certPEM, err := mcpendpoint.LoadCert(ctx, c, types.NamespacedName{Namespace: o.namespace, Name: o.mcpHeadersTLSSecret}, host, controllers.FieldOwner)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	v, err := toolauth.New(toolauth.Options{Client: cs, Audience: mcpheaders.Audience, AllNamespaces: true, CheckPod: mcpendpoint.CheckBoundPod})
	if err != nil {
		return err
	}
	ep := &mcpendpoint.Endpoint{Verifier: v, Reader: mgr.GetAPIReader(), Log: ctrl.Log.WithName("mcp-headers"),
		Policy: workspace.Policy{PlatformNamespaces: o.platform(), DefaultTrust: vocab.TrustLevel(o.defaultTrust)}}
	// Every replica serves it, leader or not: the answers read the cluster.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { return ep.Serve(ctx, o.mcpHeadersAddr, cert) })); err != nil {
		return err
	}
	hc.MCPHeadersURL = "https://" + net.JoinHostPort(host, port) + mcpheaders.Path
	hc.MCPHeadersCA = certPEM
	return nil
}
