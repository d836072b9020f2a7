package toolauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeCluster answers TokenReviews: a token "ok-N" is pod agent's in team-a;
// anything else is refused. It counts reviews.
func fakeCluster(reviews *int) *fake.Clientset {
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "team-a", UID: "uid-1",
		Labels: map[string]string{WorkspaceLabel: "dev"}}})
	cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		*reviews++
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenReview)
		if len(tr.Spec.Token) > 3 && tr.Spec.Token[:3] == "ok-" {
			tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: tr.Spec.Audiences,
				User: authenticationv1.UserInfo{Username: "system:serviceaccount:team-a:agent",
					Extra: map[string]authenticationv1.ExtraValue{extraPodName: {"agent"}, extraPodUID: {"uid-1"}}}}
		} else {
			tr.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
		}
		return true, tr, nil
	})
	return cs
}

// TestVerify_CachesAcceptedTokensBrieflyAndBoundedNeverRefusals: an accepted
// token is accepted again without a review until the TTL passes; a refused
// one is reviewed every time; the cache never holds more than its bound.
func TestVerify_CachesAcceptedTokensBrieflyAndBoundedNeverRefusals(t *testing.T) {
	reviews := 0
	now := time.Unix(1_800_000_000, 0)
	v, err := New(Options{Client: fakeCluster(&reviews), Namespaces: []string{"team-a"}, CacheTTL: 30 * time.Second,
		CacheEntries: 4, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 3 {
		c, err := v.Verify(ctx, "ok-1")
		if err != nil || *c != (Caller{Namespace: "team-a", Pod: "agent", PodUID: "uid-1", ServiceAccount: "agent", Workspace: "dev"}) {
			t.Fatalf("%+v %v", c, err)
		}
	}
	if reviews != 1 {
		t.Fatalf("%d reviews of one token within the TTL", reviews)
	}
	now = now.Add(31 * time.Second)
	if _, err := v.Verify(ctx, "ok-1"); err != nil || reviews != 2 {
		t.Fatalf("after the TTL: %v, %d reviews", err, reviews)
	}
	for range 2 {
		_, err := v.Verify(ctx, "bad")
		var e *Error
		if !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
			t.Fatalf("refused token: %v", err)
		}
	}
	if reviews != 4 {
		t.Fatalf("a refusal was cached: %d reviews", reviews)
	}
	for i := range 20 {
		if _, err := v.Verify(ctx, "ok-"+string(rune('a'+i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := v.cache.Len(); n > 4 {
		t.Fatalf("cache holds %d entries over its bound 4", n)
	}
}

// TestMiddleware_RefusesWithStatusAndReason: no token is a 401 naming the
// Bearer scheme; the handler sees the verified Caller.
func TestMiddleware_RefusesWithStatusAndReason(t *testing.T) {
	reviews := 0
	v, err := New(Options{Client: fakeCluster(&reviews), Namespaces: []string{"team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := FromContext(r.Context())
		_, _ = w.Write([]byte(c.Workspace))
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" {
		t.Fatalf("no token: %d %q", rec.Code, rec.Body)
	}
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Header.Set("Authorization", "Bearer ok-1")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.String() != "dev" {
		t.Fatalf("valid token: %d %q", rec.Code, rec.Body)
	}
}
