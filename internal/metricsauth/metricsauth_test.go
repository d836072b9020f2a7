package metricsauth

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"
)

// fakeAPIServer answers TokenReviews and SubjectAccessReviews: tokens maps a
// token to its user, allowed the users who may get /metrics. It counts the
// reviews it answered and keeps the last SubjectAccessReview.
type fakeAPIServer struct {
	tokens  map[string]authenticationv1.UserInfo
	allowed map[string]bool
	fail    bool

	mu         sync.Mutex
	tokenCalls int
	sarCalls   int
	lastSAR    authorizationv1.SubjectAccessReviewSpec
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":503}`, http.StatusServiceUnavailable)
		return
	}
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/apis/authentication.k8s.io/v1/tokenreviews":
		f.tokenCalls++
		var tr authenticationv1.TokenReview
		_ = json.Unmarshal(body, &tr)
		if u, ok := f.tokens[tr.Spec.Token]; ok {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: u}
		}
		_ = json.NewEncoder(w).Encode(tr)
	case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
		f.sarCalls++
		var sar authorizationv1.SubjectAccessReview
		_ = json.Unmarshal(body, &sar)
		f.lastSAR = sar.Spec
		na := sar.Spec.NonResourceAttributes
		sar.Status.Allowed = f.allowed[sar.Spec.User] && na != nil && na.Path == "/metrics" && na.Verb == "get"
		_ = json.NewEncoder(w).Encode(sar)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeAPIServer) calls() (tokens, sars int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenCalls, f.sarCalls
}

// guarded serves a metrics handler behind the filter, with the fake as the
// API server.
func guarded(t *testing.T, f *fakeAPIServer) (*httptest.Server, *guard) {
	t.Helper()
	api := httptest.NewServer(f)
	t.Cleanup(api.Close)
	// JSON, so the fake can read what client-go sends (protobuf by default).
	cfg := &rest.Config{Host: api.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"},
		QPS: 1e6, Burst: 1e6} // the bound test sends thousands of reviews
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := newGuard(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "loadout_up 1\n") })
	h, err := g.filter(logr.Discard(), metrics)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, g
}

func scrape(t *testing.T, srv *httptest.Server, path, authorization string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func newFake() *fakeAPIServer {
	return &fakeAPIServer{
		tokens: map[string]authenticationv1.UserInfo{
			"prometheus": {Username: "system:serviceaccount:monitoring:prometheus", UID: "u1",
				Groups: []string{"system:serviceaccounts", "system:authenticated"},
				Extra:  map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"prometheus-0"}}},
			"stranger": {Username: "system:serviceaccount:monitoring:stranger", Groups: []string{"system:authenticated"}},
		},
		allowed: map[string]bool{"system:serviceaccount:monitoring:prometheus": true},
	}
}

func TestFilter_AuthenticatesThenAuthorizesTheRequestsVerbAndPath(t *testing.T) {
	f := newFake()
	srv, _ := guarded(t, f)
	for _, tc := range []struct {
		who, path, authorization string
		want                     int
	}{
		{"no Authorization header", "/metrics", "", http.StatusUnauthorized},
		{"a Basic credential", "/metrics", "Basic cHJvbWV0aGV1czp4", http.StatusUnauthorized},
		{"an empty bearer token", "/metrics", "Bearer ", http.StatusUnauthorized},
		{"a token the API server rejects", "/metrics", "Bearer not-a-token", http.StatusUnauthorized},
		{"a user without the metrics reader role", "/metrics", "Bearer stranger", http.StatusForbidden},
		{"the metrics reader on another path", "/debug/pprof/", "Bearer prometheus", http.StatusForbidden},
		{"the metrics reader", "/metrics", "bearer  prometheus", http.StatusOK},
	} {
		code, body := scrape(t, srv, tc.path, tc.authorization)
		if code != tc.want {
			t.Errorf("%s: GET %s = %d, want %d (%s)", tc.who, tc.path, code, tc.want, strings.TrimSpace(body))
		}
		if (code == http.StatusOK) != strings.Contains(body, "loadout_up") {
			t.Errorf("%s: metrics served = %v with status %d", tc.who, strings.Contains(body, "loadout_up"), code)
		}
	}
	// The review carried everything the API server authenticated.
	sar := f.lastSAR
	if sar.User != "system:serviceaccount:monitoring:prometheus" || sar.UID != "u1" || len(sar.Groups) != 2 ||
		sar.Extra["authentication.kubernetes.io/pod-name"][0] != "prometheus-0" ||
		sar.NonResourceAttributes == nil || sar.NonResourceAttributes.Verb != "get" || sar.ResourceAttributes != nil {
		t.Errorf("SubjectAccessReview spec = %+v", sar)
	}
	if tokens, _ := f.calls(); tokens != 3 {
		t.Errorf("TokenReviews = %d, want 3: one per distinct token, none without one, a known token's answer kept", tokens)
	}
}

func TestFilter_RemembersAnswersUntilTheirTTL(t *testing.T) {
	f := newFake()
	srv, g := guarded(t, f)
	for range 3 {
		if code, _ := scrape(t, srv, "/metrics", "Bearer prometheus"); code != http.StatusOK {
			t.Fatalf("GET /metrics = %d", code)
		}
	}
	if tokens, sars := f.calls(); tokens != 1 || sars != 1 {
		t.Fatalf("3 scrapes sent %d TokenReviews and %d SubjectAccessReviews, want 1 and 1", tokens, sars)
	}
	// A token's answer lasts a minute: a revoked token stops working then.
	g.now = func() time.Time { return time.Now().Add(tokenTTL + time.Second) }
	delete(f.tokens, "prometheus")
	if code, _ := scrape(t, srv, "/metrics", "Bearer prometheus"); code != http.StatusUnauthorized {
		t.Errorf("a revoked token after its TTL: GET /metrics = %d, want 401", code)
	}
}

func TestFilter_FailsClosedWhenTheAPIServerDoesNotAnswer(t *testing.T) {
	f := newFake()
	f.fail = true
	srv, _ := guarded(t, f)
	if code, body := scrape(t, srv, "/metrics", "Bearer prometheus"); code != http.StatusInternalServerError || strings.Contains(body, "loadout_up") {
		t.Fatalf("API server down: GET /metrics = %d %q, want 500 and no metrics", code, body)
	}
	// The failure is not remembered as an answer.
	f.mu.Lock()
	f.fail = false
	f.mu.Unlock()
	if code, _ := scrape(t, srv, "/metrics", "Bearer prometheus"); code != http.StatusOK {
		t.Errorf("API server back: GET /metrics = %d, want 200", code)
	}
}

func TestFilter_CachesStayBoundedUnderEverNewTokensAndPaths(t *testing.T) {
	f := newFake()
	srv, g := guarded(t, f)
	for i := range maxEntries + 200 {
		scrape(t, srv, "/metrics", fmt.Sprintf("Bearer random-%d", i))
		scrape(t, srv, fmt.Sprintf("/metrics/%d", i), "Bearer stranger")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.users.Len() > maxEntries || g.decisions.Len() > maxEntries {
		t.Errorf("caches hold %d tokens and %d decisions, want at most %d each", g.users.Len(), g.decisions.Len(), maxEntries)
	}
}

func TestDecisionKey_NoTwoQuestionsShareAKey(t *testing.T) {
	u := func(name string, groups ...string) *authenticationv1.UserInfo {
		return &authenticationv1.UserInfo{Username: name, Groups: groups}
	}
	keys := map[[32]byte]string{}
	for name, k := range map[string][32]byte{
		"a/b get /metrics":     decisionKey(u("a", "b"), "get", "/metrics"),
		"ab get /metrics":      decisionKey(u("ab"), "get", "/metrics"),
		"a get /metrics (b)":   decisionKey(u("a"), "get", "/metrics"),
		"a get /metricsb":      decisionKey(u("a"), "get", "/metricsb"),
		"a with extra":         decisionKey(&authenticationv1.UserInfo{Username: "a", Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}}, "get", "/metrics"),
		"a with group k, v":    decisionKey(u("a", "k", "v"), "get", "/metrics"),
		"a post /metrics":      decisionKey(u("a"), "post", "/metrics"),
		"a get /metrics twice": decisionKey(u("a", "b", "b"), "get", "/metrics"),
	} {
		if other, ok := keys[k]; ok {
			t.Errorf("%q and %q share a key", name, other)
		}
		keys[k] = name
	}
}
