// Package approvaltest is a fake API server for the Approvals of one
// namespace, and a Broker wired to it, for tests of what hostd does with a
// decision (the real API server's admission is test/approvals').
package approvaltest

import (
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/approval"
)

// Namespace, User and PodUID are the fake pod's.
const (
	Namespace = "team-a"
	User      = "system:serviceaccount:team-a:agent"
	PodUID    = "0f5c6c1e-0000-4000-8000-000000000001"
)

// API holds the Approvals of Namespace as an API server would: POST
// creates (name from generateName, a UID), GET reads, a watch ends at once
// without events (the client reads again).
type API struct {
	mu      sync.Mutex
	objects map[string]*approval.Object
	n       int
}

func (f *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	base := "/apis/loadout.dev/v1alpha1/namespaces/" + Namespace + "/approvals"
	switch {
	case r.Method == http.MethodPost && r.URL.Path == base:
		var o approval.Object
		if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.n++
		o.Metadata.Name = fmt.Sprintf("%s%d", o.Metadata.GenerateName, f.n)
		o.Metadata.UID = fmt.Sprintf("uid-%d", f.n)
		o.Metadata.ResourceVersion = "1"
		o.Status.Decision = approval.Pending
		f.objects[o.Metadata.Name] = &o
		_ = json.NewEncoder(w).Encode(o)
	case r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true":
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, base+"/"):
		o := f.objects[strings.TrimPrefix(r.URL.Path, base+"/")]
		if o == nil {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"not found"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(o)
	default:
		http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
	}
}

// Change edits the Approval name as an approver or a tenant would.
func (f *API) Change(name string, edit func(*approval.Object)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	edit(f.objects[name])
}

// Names are the Approvals' names, in creation order.
func (f *API) Names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, 0, len(f.objects))
	for n := range f.objects {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return f.objects[names[i]].Metadata.UID < f.objects[names[j]].Metadata.UID })
	return names
}

// Get is the Approval name, a copy.
func (f *API) Get(name string) approval.Object {
	f.mu.Lock()
	defer f.mu.Unlock()
	return *f.objects[name]
}

// Approve decides as an approver.
func Approve(by string) func(*approval.Object) {
	return func(o *approval.Object) { o.Status.Decision, o.Status.DecidedBy = approval.Approved, by }
}

// Token writes a ServiceAccount token's shape for User bound to pod agent-0
// (hostd reads its claims only) and returns its path.
func Token(t testing.TB) string {
	t.Helper()
	claims, _ := json.Marshal(map[string]any{"sub": User,
		"kubernetes.io": map[string]any{"namespace": Namespace, "serviceaccount": map[string]any{"name": "agent"}, "pod": map[string]any{"name": "agent-0", "uid": PodUID}}})
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("e30."+base64.RawURLEncoding.EncodeToString(claims)+".sig"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// NewBroker starts a fake API server (TLS) and returns a Broker asking it
// as the fake pod, with now as its clock (nil: time.Now).
func NewBroker(t testing.TB, now func() time.Time) (*approval.Broker, *API) {
	t.Helper()
	api := &API{objects: map[string]*approval.Object{}}
	srv := httptest.NewTLSServer(api)
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	tokenFile := Token(t)
	c, err := approval.New(approval.Config{Server: srv.URL, CAData: ca, TokenFile: tokenFile, Namespace: Namespace})
	if err != nil {
		t.Fatal(err)
	}
	return approval.NewBroker(c, func() (approval.Identity, error) { return approval.TokenIdentity(tokenFile) }, now), api
}
