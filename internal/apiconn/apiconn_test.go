package apiconn

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// fakeServer serves the discovery documents NewMapper and the dynamic
// mapper read, and records every path asked for.
type fakeServer struct {
	*httptest.Server
	mu        sync.Mutex
	paths     []string
	encodings []string
	noLoadout bool // the loadout.dev CRDs are not installed
}

func newFakeServer(t *testing.T, noLoadout bool) *fakeServer {
	t.Helper()
	f := &fakeServer{noLoadout: noLoadout}
	// TLS: client-go honours DisableCompression only on a transport of its
	// own, which plain HTTP without TLS options does not get.
	f.Server = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.encodings = append(f.encodings, r.Header.Get("Accept-Encoding"))
	f.mu.Unlock()
	var body any
	switch r.URL.Path {
	case "/api":
		body = metav1.APIVersions{Versions: []string{"v1"}}
	case "/api/v1":
		body = metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", Verbs: []string{"get", "list"}},
			{Name: "namespaces", SingularName: "namespace", Namespaced: false, Kind: "Namespace", Verbs: []string{"get", "list"}},
		}}
	case "/apis/loadout.dev/v1alpha1":
		if f.noLoadout {
			http.NotFound(w, r)
			return
		}
		body = metav1.APIResourceList{GroupVersion: "loadout.dev/v1alpha1", APIResources: []metav1.APIResource{
			{Name: "workspaces", SingularName: "workspace", Namespaced: true, Kind: "Workspace", Verbs: []string{"get", "list"}},
		}}
	case "/apis":
		v := metav1.GroupVersionForDiscovery{GroupVersion: "apps/v1", Version: "v1"}
		body = metav1.APIGroupList{Groups: []metav1.APIGroup{{Name: "apps", Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v}}}
	case "/apis/apps/v1":
		body = metav1.APIResourceList{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", Verbs: []string{"get", "list"}},
		}}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func (f *fakeServer) config() *rest.Config {
	return &rest.Config{Host: f.URL, TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.Certificate().Raw})}}
}

func (f *fakeServer) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

func mapperFor(t *testing.T, f *fakeServer) (meta.RESTMapper, error) {
	t.Helper()
	cfg := f.config()
	Configure(cfg, Options{})
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return NewMapper(cfg, hc)
}

// The manager's kinds map from the two resource lists read at start, with
// the server's resource names and scopes, and no aggregated discovery of
// every group (/api, /apis), which controller-runtime's mapper keeps in
// full (issue 45).
func TestNewMapper_MapsTheManagersKindsFromTheirOwnListsAlone(t *testing.T) {
	f := newFakeServer(t, false)
	m, err := mapperFor(t, f)
	if err != nil {
		t.Fatal(err)
	}
	for gk, want := range map[schema.GroupKind]struct {
		resource string
		scope    meta.RESTScopeName
	}{
		{Kind: "ConfigMap"}:                       {"configmaps", meta.RESTScopeNameNamespace},
		{Kind: "Namespace"}:                       {"namespaces", meta.RESTScopeNameRoot},
		{Group: "loadout.dev", Kind: "Workspace"}: {"workspaces", meta.RESTScopeNameNamespace},
	} {
		rm, err := m.RESTMapping(gk)
		if err != nil {
			t.Fatalf("%s: %v", gk, err)
		}
		if rm.Resource.Resource != want.resource || rm.Scope.Name() != want.scope {
			t.Errorf("%s: %s %s, want %s %s", gk, rm.Resource.Resource, rm.Scope.Name(), want.resource, want.scope)
		}
	}
	if got := strings.Join(f.asked(), " "); got != "/api/v1 /apis/loadout.dev/v1alpha1" {
		t.Errorf("asked %s, want the two lists only", got)
	}
}

// Any other kind still maps, through discovery, as before.
func TestNewMapper_OtherKindsFallThroughToDiscovery(t *testing.T) {
	f := newFakeServer(t, false)
	m, err := mapperFor(t, f)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := m.RESTMapping(schema.GroupKind{Group: "apps", Kind: "Deployment"})
	if err != nil || rm.Resource.Resource != "deployments" {
		t.Fatalf("Deployment: %+v, %v", rm, err)
	}
	if _, err := m.RESTMapping(schema.GroupKind{Group: "nowhere.example", Kind: "Thing"}); !meta.IsNoMatchError(err) {
		t.Errorf("an unknown kind: %v, want a no-match error", err)
	}
}

// Without the CRDs the manager does not start, and says why.
func TestNewMapper_MissingCRDsFailTheStartByName(t *testing.T) {
	_, err := mapperFor(t, newFakeServer(t, true))
	if err == nil || !strings.Contains(err.Error(), "loadout.dev/v1alpha1") || !strings.Contains(err.Error(), "CRDs") {
		t.Errorf("got %v, want an error naming loadout.dev/v1alpha1 and the CRDs", err)
	}
}

// Off by default, the manager does not ask for gzip: an open watch holds no
// gzip reader. --kube-api-compression asks again.
func TestConfigure_NoCompressionUnlessAsked(t *testing.T) {
	for _, compression := range []bool{false, true} {
		f := newFakeServer(t, false)
		cfg := f.config()
		Configure(cfg, Options{QPS: 7, Burst: 9, Compression: compression})
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Get(f.URL + "/api/v1")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := f.encodings[0]; (got == "gzip") != compression {
			t.Errorf("compression %v: Accept-Encoding %q", compression, got)
		}
		if cfg.QPS != 7 || cfg.Burst != 9 || cfg.RateLimiter == nil || cfg.RateLimiter.QPS() != 7 {
			t.Errorf("rate limit: QPS %v burst %d limiter %v, want one 7/9 bucket", cfg.QPS, cfg.Burst, cfg.RateLimiter)
		}
	}
}
