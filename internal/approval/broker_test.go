package approval

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAPI is the Approvals of one namespace as the API server serves them;
// decide and replace change an object as an approver or a tenant would.
type fakeAPI struct {
	mu      sync.Mutex
	objects map[string]*Object
	n       int
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	base := "/apis/loadout.dev/v1alpha1/namespaces/team-a/approvals"
	switch {
	case r.Method == http.MethodPost && r.URL.Path == base:
		var o Object
		if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.n++
		o.Metadata.Name = fmt.Sprintf("%s%d", o.Metadata.GenerateName, f.n)
		o.Metadata.UID = fmt.Sprintf("uid-%d", f.n)
		o.Metadata.ResourceVersion = "1"
		o.Status.Decision = Pending
		f.objects[o.Metadata.Name] = &o
		_ = json.NewEncoder(w).Encode(o)
	case r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true":
		// No events: the watch ends and the client reads again.
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

func (f *fakeAPI) change(name string, edit func(*Object)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	edit(f.objects[name])
}

func (f *fakeAPI) only() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for name := range f.objects {
		return name
	}
	return ""
}

// token is a ServiceAccount token's shape (hostd reads its claims only).
func token(t *testing.T) string {
	t.Helper()
	claims, _ := json.Marshal(map[string]any{"sub": "system:serviceaccount:team-a:agent",
		"kubernetes.io": map[string]any{"namespace": "team-a", "serviceaccount": map[string]any{"name": "agent"}, "pod": map[string]any{"name": "agent-0"}}})
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("e30."+base64.RawURLEncoding.EncodeToString(claims)+".sig"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newTestBroker(t *testing.T, now func() time.Time) (*Broker, *fakeAPI) {
	t.Helper()
	api := &fakeAPI{objects: map[string]*Object{}}
	srv := httptest.NewTLSServer(api)
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	tokenFile := token(t)
	id, err := TokenIdentity(tokenFile)
	if err != nil || id.User != "system:serviceaccount:team-a:agent" || id.Pod != "agent-0" || id.Namespace != "team-a" {
		t.Fatalf("identity %+v %v", id, err)
	}
	c, err := New(Config{Server: srv.URL, CAData: ca, TokenFile: tokenFile, Namespace: id.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	return NewBroker(c, func() (Identity, error) { return TokenIdentity(tokenFile) }, now), api
}

func request(command string) Request {
	args := map[string]any{"command": command}
	b, _ := json.Marshal(args)
	return Request{Workspace: "team-a/dev", Tool: "bash", Arguments: args, Digest: string(b), Extension: "prod-guard", Hook: "apply",
		ApproverGroups: []string{"platform:approvers"}, Expiry: time.Minute, Wait: 300 * time.Millisecond}
}

// What hostd honours (R-APV-4): its own Approval for this call, approved by
// someone else, once; an object replaced under the same name, one decided by
// the requester, or a decision after expiry is never a yes.
func TestBroker_HonoursOnlyItsOwnApprovalForTheCallOnceInTime(t *testing.T) { // R-APV-4
	approve := func(by string) func(*Object) {
		return func(o *Object) { o.Status.Decision, o.Status.DecidedBy = Approved, by }
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Object)
		state string
	}{
		{"approved by an approver", approve("alice"), Approved},
		{"denied", func(o *Object) { o.Status.Decision, o.Status.DecidedBy, o.Status.Reason = Denied, "alice", "no" }, Denied},
		{"replaced under the same name", func(o *Object) { approve("alice")(o); o.Metadata.UID = "someone-else" }, Deleted},
		{"decided by the requester", approve("system:serviceaccount:team-a:agent"), Denied},
		{"its call changed", func(o *Object) { approve("alice")(o); o.Spec.Call.ArgumentsDigest = "other" }, Denied},
		{"its approver groups changed", func(o *Object) { approve("alice")(o); o.Spec.ApproverGroups = []string{"devs"} }, Denied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, api := newTestBroker(t, nil)
			req := request("terraform apply")
			if out := b.Decide(context.Background(), req, nil); out.State != Pending {
				t.Fatalf("undecided: %+v", out)
			}
			api.change(api.only(), tc.edit)
			out := b.Decide(context.Background(), req, nil)
			if out.State != tc.state || out.Name != api.only() {
				t.Fatalf("got %+v, want %s", out, tc.state)
			}
			if tc.state != Approved {
				return
			}
			// Spent: the same call asks again with a new Approval.
			again := b.Decide(context.Background(), req, nil)
			if again.State != Pending || again.Name == out.Name {
				t.Errorf("a spent Approval: %+v", again)
			}
		})
	}

	t.Run("decided after it expired", func(t *testing.T) {
		now := time.Now()
		clock := func() time.Time { return now }
		b, api := newTestBroker(t, clock)
		req := request("terraform apply")
		first := b.Decide(context.Background(), req, nil)
		api.change(first.Name, approve("alice"))
		now = now.Add(2 * time.Minute)
		if out := b.Decide(context.Background(), req, nil); out.State != Pending || out.Name == first.Name {
			t.Errorf("after expiry: %+v, want a new, pending Approval", out)
		}
	})
}

func TestTokenIdentity_RefusesWhatIsNotAServiceAccountToken(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not a JWT":    "abc",
		"bad base64":   "a.!!!.c",
		"not JSON":     "a." + base64.RawURLEncoding.EncodeToString([]byte("[")) + ".c",
		"a user token": "a." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"alice"}`)) + ".c",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if id, err := TokenIdentity(path); err == nil {
			t.Errorf("%s: %+v, want an error", name, id)
		}
	}
}
