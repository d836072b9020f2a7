package mcptools

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/hostd"
	"github.com/loadout-dev/loadout/internal/mcpheaders"
	mcpendpoint "github.com/loadout-dev/loadout/internal/mcpheaders/endpoint"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	"github.com/loadout-dev/loadout/internal/toolauth"
	"github.com/loadout-dev/loadout/internal/workspace"
)

const headersHost = "loadout-mcp-headers.loadout-system.svc"

// keyedServer is server-everything behind an HTTPS proxy (its certificate
// names host; ca verifies it) that refuses (401) any request without the
// API key, counting both.
type keyedServer struct {
	addr           string
	ca             []byte
	keyed, refused atomic.Int32
}

func newKeyedServer(t *testing.T, upstream, host, header, key string) *keyedServer {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	cert, certPEM := servingCert(t, host)
	ks := &keyedServer{ca: certPEM}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy.FlushInterval = -1
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(header) != key {
			ks.refused.Add(1)
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		ks.keyed.Add(1)
		r.Header.Del(header)
		proxy.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ks.addr = strings.TrimPrefix(srv.URL, "https://")
	return ks
}

// TestHeaders_OnlyHostdOfABoundPodGetsThePlatformsKey is the whole path of
// an MCP server that needs an API key from a platform Secret (R-EXT-7): the
// manager's discovery sends it; hostd of a pod bound to a Workspace the
// Extension applies to gets it from the manager's endpoint with its
// pod-bound token and its calls succeed; another audience's token, an
// unbound pod, a pod not shaped as bound and a Workspace the Extension does
// not apply to get nothing; a tenant Extension naming a Secret is refused;
// and the key is in no ConfigMap, status, Event or log line.
func TestHeaders_OnlyHostdOfABoundPodGetsThePlatformsKey(t *testing.T) {
	ctx := context.Background()
	key := fmt.Sprintf("k-%d-do-not-leak", os.Getpid())
	ks := newKeyedServer(t, testnet.StartEverything(t).URL, "keyed-everything."+platformNS+".svc", "X-Api-Key", key)
	svcHost := "keyed-everything." + platformNS + ".svc:3001"
	routes.add(svcHost, ks.addr)

	ns := kit.NewNamespace(t, vocab.TrustTrusted)
	other := kit.NewNamespace(t, vocab.TrustTrusted)
	labelNamespace(t, ns, "headers-test", ns)
	kit.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: platformNS, Name: "keyed-" + ns},
		Data: map[string][]byte{"X-Api-Key": []byte(key), "unused": []byte("x")}})
	ext := &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: platformNS, Name: "keyed-" + ns},
		Spec: v1alpha1.ExtensionSpec{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"headers-test": ns}},
			MCPServer: &v1alpha1.MCPServer{
				Service:     &v1alpha1.MCPServiceReference{Name: "keyed-everything", Port: 3001, Path: "/mcp", CABundle: ks.ca},
				Tools:       v1alpha1.MCPToolSelection{Allow: []string{"echo"}, Prefix: "hk_"},
				HeadersFrom: &v1alpha1.MCPHeadersSource{SecretRef: v1alpha1.MCPHeadersSecretRef{Name: "keyed-" + ns}, Keys: []string{"X-Api-Key"}},
			}}}
	kit.Create(t, ext)
	kit.Create(t, workspaceIn(ns))
	kit.Create(t, workspaceIn(other))

	// Discovery went through the key-checking proxy: the manager sent it.
	waitDiscovered(t, platformNS, ext.Name)
	if ks.keyed.Load() == 0 {
		t.Fatal("the server listed its tools without seeing the key")
	}
	_, cm := kit.Published(t, ns, "dev", "hk_echo")
	if tool := toolNamed(registryOf(t, cm), "hk_echo"); tool == nil || tool.MCP == nil || tool.MCP.HeadersFrom != platformNS+"/"+ext.Name {
		t.Fatalf("registry's hk_echo = %+v, want mcp.headersFrom naming the Extension", tool)
	}

	// The manager's endpoint, as cmd/manager wires it.
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testenv.SyncBuffer{} // the endpoint's log lines
	endpointAddr, ca := startHeadersEndpoint(t, cs, funcr.New(func(prefix, args string) { _, _ = fmt.Fprintln(logs, prefix, args) }, funcr.Options{Verbosity: 1}))
	routes.add(net.JoinHostPort(headersHost, "8444"), endpointAddr)

	// A bound pod's hostd: its calls carry the key.
	sa := serviceAccount(t, ns)
	pod := createPod(t, ns, sa, map[string]string{toolauth.WorkspaceLabel: "dev"}, true)
	h := startHostdWithHeaders(t, cm, svcHost, ks.addr, endpointAddr, ca, testenv.Token(t, cs, ns, sa, pod, mcpheaders.Audience))
	before := ks.keyed.Load()
	out := callREST(t, h, "hk_echo", map[string]any{"message": "hello"})
	if !out.Executed || out.Result.IsError || textOf(out.Result.Content) != "Echo: hello" {
		t.Fatalf("hk_echo through hostd = %+v", out)
	}
	if ks.keyed.Load() == before {
		t.Fatal("hostd's call reached the server without the key")
	}

	// Nobody else gets the key.
	otherSA := serviceAccount(t, other)
	otherPod := createPod(t, other, otherSA, map[string]string{toolauth.WorkspaceLabel: "dev"}, true)
	refusals := map[string]struct {
		token string
		code  int
	}{
		"hostd's tool-Service token (another audience)": {testenv.Token(t, cs, ns, sa, pod, toolauth.Audience), http.StatusUnauthorized},
		"no token":                    {"", http.StatusUnauthorized},
		"a pod bound to no Workspace": {testenv.Token(t, cs, ns, sa, createPod(t, ns, sa, nil, true), mcpheaders.Audience), http.StatusForbidden},
		"a labelled pod without loadout-hostd first": {testenv.Token(t, cs, ns, sa,
			createPod(t, ns, sa, map[string]string{toolauth.WorkspaceLabel: "dev"}, false), mcpheaders.Audience), http.StatusForbidden},
		"a Workspace the Extension does not apply to": {testenv.Token(t, cs, other, otherSA, otherPod, mcpheaders.Audience), http.StatusForbidden},
	}
	for name, tc := range refusals {
		t.Run(name, func(t *testing.T) {
			code, body := postHeaders(t, endpointAddr, ca, tc.token, platformNS+"/"+ext.Name)
			if code != tc.code || strings.Contains(body, key) {
				t.Fatalf("answered %d %s, want %d without the key", code, body, tc.code)
			}
		})
	}

	// The endpoint down: the call is blocked, naming why, and never sent.
	down := startHostdWithHeaders(t, cm, svcHost, ks.addr, "127.0.0.1:1", ca, testenv.Token(t, cs, ns, sa, pod, mcpheaders.Audience))
	before = ks.keyed.Load() + ks.refused.Load()
	out = callREST(t, down, "hk_echo", map[string]any{"message": "hello"})
	if !out.Result.IsError || !strings.Contains(textOf(out.Result.Content), "the headers of "+platformNS+"/"+ext.Name+" from the manager") {
		t.Fatalf("a call with the endpoint down = %+v, want blocked naming the manager", out)
	}
	if ks.keyed.Load()+ks.refused.Load() != before {
		t.Fatal("a call without its headers reached the server")
	}

	// A tenant's Extension naming a Secret is refused, naming the field.
	tenant := v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "tenant-keyed"},
		Spec: v1alpha1.ExtensionSpec{MCPServer: &v1alpha1.MCPServer{
			Service:     &v1alpha1.MCPServiceReference{Name: "keyed-everything", Port: 3001},
			Tools:       v1alpha1.MCPToolSelection{Allow: []string{"echo"}},
			HeadersFrom: &v1alpha1.MCPHeadersSource{SecretRef: v1alpha1.MCPHeadersSecretRef{Name: "mine"}}}}}
	kit.Create(t, &tenant)
	kit.Eventually(t, func() error {
		if err := kit.Client.Get(ctx, client.ObjectKeyFromObject(&tenant), &tenant); err != nil {
			return err
		}
		c := meta.FindStatusCondition(tenant.Status.Conditions, string(vocab.ConditionToolsDiscovered))
		if c == nil || c.Reason != string(vocab.ReasonDiscoveryNotAllowed) || !strings.Contains(c.Message, "spec.mcpServer.headersFrom") {
			return fmt.Errorf("ToolsDiscovered = %+v, want DiscoveryNotAllowed naming spec.mcpServer.headersFrom", c)
		}
		return nil
	})

	// The key is nowhere a tenant (or the log) can read.
	assertNoKey(t, key, ns, other, platformNS)
	if strings.Contains(logs.String(), key) {
		t.Fatalf("the endpoint logged the key:\n%s", logs)
	}
}

func labelNamespace(t *testing.T, ns, k, v string) {
	t.Helper()
	n := &corev1.Namespace{}
	if err := kit.Client.Get(context.Background(), client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	n.Labels[k] = v
	if err := kit.Client.Update(context.Background(), n); err != nil {
		t.Fatal(err)
	}
}

func serviceAccount(t *testing.T, ns string) string {
	t.Helper()
	kit.Create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"}})
	return "agent"
}

var podSeq atomic.Int32

// createPod creates a pod of ns running as sa: bound (loadout-hostd first
// among its init containers) or not. No admission policy runs here: the
// endpoint's own checks are what is tested.
func createPod(t *testing.T, ns, sa string, labels map[string]string, withHostd bool) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("agent-%d", podSeq.Add(1)), Labels: labels},
		Spec: corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "agent", Image: "agent"}}}}
	if withHostd {
		always := corev1.ContainerRestartPolicyAlways
		p.Spec.InitContainers = []corev1.Container{{Name: "loadout-hostd", Image: "hostd", RestartPolicy: &always}}
	}
	kit.Create(t, p)
	return p
}

// servingCert is a fresh self-signed certificate for host and its PEM,
// which a client trusts as its only root.
func servingCert(t *testing.T, host string) (tls.Certificate, []byte) {
	t.Helper()
	certPEM, keyPEM, err := mcpheaders.NewServingCert([]string{host}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert, certPEM
}

func startHeadersEndpoint(t *testing.T, cs kubernetes.Interface, log logr.Logger) (addr string, ca []byte) {
	t.Helper()
	cert, certPEM := servingCert(t, headersHost)
	v, err := toolauth.New(toolauth.Options{Client: cs, Audience: mcpheaders.Audience, AllNamespaces: true, CheckPod: mcpendpoint.CheckBoundPod})
	if err != nil {
		t.Fatal(err)
	}
	ep := &mcpendpoint.Endpoint{Verifier: v, Reader: kit.Client, Log: log,
		Policy: workspace.Policy{PlatformNamespaces: []string{platformNS}, DefaultTrust: vocab.TrustRestricted}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = ep.ServeListener(ctx, ln, cert) }()
	return ln.Addr().String(), certPEM
}

func startHostdWithHeaders(t *testing.T, cm *corev1.ConfigMap, svcHost, svcAddr, endpointAddr string, ca []byte, token string) string {
	t.Helper()
	tokenFile := testenv.TempFile(t, "mcp-headers-token", []byte(token), 0o600)
	fetcher, err := mcpheaders.NewFetcher(mcpheaders.FetcherOptions{URL: "https://" + headersHost + ":8444" + mcpheaders.Path, CA: ca,
		TokenFile: tokenFile, Addresses: map[string]string{headersHost + ":8444": endpointAddr}})
	if err != nil {
		t.Fatal(err)
	}
	return serveContext(t, cm, svcHost, svcAddr, hostd.Options{MCPHeaders: fetcher})
}

// postHeaders asks the endpoint directly, as anyone in the cluster could.
func postHeaders(t *testing.T, addr string, ca []byte, token, extension string) (int, string) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: headersHost, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}}
	body := testenv.JSON(t, mcpheaders.Request{Extension: extension})
	req, _ := http.NewRequest(http.MethodPost, "https://"+headersHost+":8444"+mcpheaders.Path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return testnet.Do(t, c, req)
}

// assertNoKey reads every ConfigMap, Extension, Workspace and Event of the
// namespaces and fails if the key is in any of them.
func assertNoKey(t *testing.T, key string, namespaces ...string) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range namespaces {
		lists := []client.ObjectList{&corev1.ConfigMapList{}, &v1alpha1.ExtensionList{}, &v1alpha1.WorkspaceList{}, &corev1.EventList{}}
		for _, l := range lists {
			if err := kit.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(l)
			if bytes.Contains(b, []byte(key)) {
				t.Fatalf("the key is in a %T of %s", l, ns)
			}
		}
	}
}
