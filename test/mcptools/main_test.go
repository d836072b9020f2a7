// Package mcptools proves MCP servers behind Extensions end to end on
// envtest: the manager lists a real third-party server's tools into status
// and the Workspace's registry, and hostd calls them through the hooks.
package mcptools

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testmanager"
	"github.com/loadout-dev/loadout/internal/workspace"
)

const platformNS = "loadout-system"

var (
	env    *envtest.Environment
	kit    *testenv.Kit
	routes = &router{to: map[string]string{}}
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	return testenv.RunSuite(m, testenv.SuiteOptions{Timeout: 60 * time.Second, NamespacePrefix: "mcp-",
		TrustedNamespaces: []string{platformNS}}, func(s *testenv.Suite) (func() error, error) {
		env, kit = s.Env, s.Kit
		// The manager reaches the tests' Services through routes, as the
		// cluster's DNS would; everything else is as the manager wires it.
		doer := routes.doer(outbound.Options{Timeout: 5 * time.Second, MaxResponseBytes: 4 << 20})
		mgr, err := testmanager.Start(context.Background(), s.Config, testmanager.Options{Controllers: controllers.Options{
			Policy:                  workspace.Policy{PlatformNamespaces: []string{platformNS}, DefaultTrust: vocab.TrustRestricted},
			Loader:                  workspace.HostLoader{Outbound: doer},
			MaxConcurrentReconciles: 2,
			ReconcileTimeout:        30 * time.Second,
			MCP:                     controllers.MCPDiscovery{Outbound: doer, Resync: 2 * time.Second},
		}})
		if err != nil {
			return nil, err
		}
		return mgr.Stop, nil
	})
}

// router sends calls for a Service host:port to a loopback address, as
// curl --resolve does (outbound.Options.Addresses): the URL, Host header
// and TLS server name stay the Service's, so an HTTPS Service's certificate
// is verified as in a cluster.
type router struct {
	mu     sync.Mutex
	to     map[string]string
	client *outbound.Client // dials r.to as it was when built; nil after an add
}

func (r *router) add(hostPort, addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.to[hostPort] = addr
	r.client = nil
}

func (r *router) doer(opts outbound.Options) outbound.Doer {
	return outbound.DoerFunc(func(ctx context.Context, req outbound.Request) (*outbound.Response, error) {
		r.mu.Lock()
		if r.client == nil {
			opts.Addresses = maps.Clone(r.to)
			r.client = outbound.New(opts)
		}
		c := r.client
		r.mu.Unlock()
		return c.Do(ctx, req)
	})
}

// recorder is a reverse proxy in front of an MCP server that keeps every
// request body it passes: what the server saw.
type recorder struct {
	mu     sync.Mutex
	bodies []string
	srv    *http.Server
	addr   string
}

func (r *recorder) seen() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.bodies, "\n")
}

func newRecorder(t *testing.T, upstream string) *recorder {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy.FlushInterval = -1
	rec.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		rec.mu.Lock()
		rec.bodies = append(rec.bodies, req.Method+" "+string(body))
		rec.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, req)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rec.addr = ln.Addr().String()
	go func() { _ = rec.srv.Serve(ln) }()
	t.Cleanup(func() { _ = rec.srv.Close() })
	return rec
}
