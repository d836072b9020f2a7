// Package metricsauth guards the manager's metrics endpoint the way
// controller-runtime's metrics filter does: the caller's bearer token is
// authenticated by the API server (TokenReview), and the caller must be
// allowed the request's verb on its non-resource path (SubjectAccessReview),
// for example get on /metrics. It asks the API server through client-go's
// typed clients, which the manager links anyway; controller-runtime's filter
// links k8s.io/apiserver's delegating authenticator and authorizer, whose
// initialisers (metrics registries, feature gates, CEL libraries) cost every
// manager process about 0.35 MB of heap (docs/benchmarks.md, Shards).
package metricsauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/loadout-dev/loadout/internal/ttlcache"
)

// How long answers are remembered: controller-runtime's filter keeps a
// token's review a minute, an allowed decision 5 minutes and a denied one
// 30 seconds. A rejected token is kept 10 seconds, so a scraper with a
// wrong token does not send a review per scrape.
const (
	tokenTTL         = time.Minute
	rejectedTokenTTL = 10 * time.Second
	allowTTL         = 5 * time.Minute
	denyTTL          = 30 * time.Second
	// reviewTimeout bounds each review, so a slow API server never holds a
	// scrape (or its goroutine) longer.
	reviewTimeout = 10 * time.Second
	// maxEntries bounds each cache: tokens and paths are the caller's to
	// choose, so a caller sending ever-new ones must not grow it.
	maxEntries = 1024
)

// WithAuthenticationAndAuthorization is a metricsserver.FilterProvider.
func WithAuthenticationAndAuthorization(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	g, err := newGuard(config, httpClient)
	if err != nil {
		return nil, err
	}
	return g.filter, nil
}

func newGuard(config *rest.Config, httpClient *http.Client) (*guard, error) {
	authn, err := authenticationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("metrics authentication client: %w", err)
	}
	authz, err := authorizationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, fmt.Errorf("metrics authorization client: %w", err)
	}
	return &guard{
		tokens:    authn.TokenReviews(),
		access:    authz.SubjectAccessReviews(),
		users:     ttlcache.New[[sha256.Size]byte, *authenticationv1.UserInfo](maxEntries),
		decisions: ttlcache.New[[sha256.Size]byte, bool](maxEntries),
		now:       time.Now,
	}, nil
}

type guard struct {
	tokens authenticationclient.TokenReviewInterface
	access authorizationclient.SubjectAccessReviewInterface
	now    func() time.Time

	mu sync.Mutex
	// users maps a token's hash to who it authenticates (nil: rejected).
	users *ttlcache.Cache[[sha256.Size]byte, *authenticationv1.UserInfo]
	// decisions maps the hash of a user, verb and path to whether it is
	// allowed (hashed: the path is the caller's and may be long).
	decisions *ttlcache.Cache[[sha256.Size]byte, bool]
}

// filter is the metricsserver.Filter: next serves only requests that pass.
func (g *guard) filter(log logr.Logger, next http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.serve(log, next, w, r) }), nil
}

func (g *guard) serve(log logr.Logger, next http.Handler, w http.ResponseWriter, r *http.Request) {
	token, ok := bearerToken(r)
	if !ok {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	user, err := g.authenticate(r.Context(), token)
	if err != nil {
		// The API server did not answer: refuse, and say so to the operator.
		log.Error(err, "Authenticating a metrics request failed")
		http.Error(w, "Authentication failed", http.StatusInternalServerError)
		return
	}
	if user == nil {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	verb := strings.ToLower(r.Method)
	allowed, err := g.authorize(r.Context(), user, verb, r.URL.Path)
	if err != nil {
		log.Error(err, "Authorizing a metrics request failed", "user", user.Username)
		http.Error(w, "Authorization for user "+user.Username+" failed", http.StatusInternalServerError)
		return
	}
	if !allowed {
		log.V(4).Info("Metrics request denied", "user", user.Username, "verb", verb, "path", r.URL.Path)
		http.Error(w, "Authorization denied for user "+user.Username, http.StatusForbidden)
		return
	}
	next.ServeHTTP(w, r)
}

// bearerToken returns the request's bearer token, as the API server reads it.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// authenticate returns who token authenticates, or nil when the API server
// rejects it. Only the token's hash is kept.
func (g *guard) authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	return remember(g, g.users, sha256.Sum256([]byte(token)), func() (*authenticationv1.UserInfo, time.Duration, error) {
		ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
		defer cancel()
		review, err := g.tokens.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
		if err != nil {
			return nil, 0, fmt.Errorf("TokenReview: %w", err)
		}
		if !review.Status.Authenticated {
			return nil, rejectedTokenTTL, nil
		}
		return &review.Status.User, tokenTTL, nil
	})
}

// authorize asks whether user may verb the non-resource path.
func (g *guard) authorize(ctx context.Context, user *authenticationv1.UserInfo, verb, path string) (bool, error) {
	return remember(g, g.decisions, decisionKey(user, verb, path), func() (bool, time.Duration, error) {
		ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
		defer cancel()
		extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
		review, err := g.access.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
		}}, metav1.CreateOptions{})
		if err != nil {
			return false, 0, fmt.Errorf("SubjectAccessReview: %w", err)
		}
		if review.Status.Allowed && !review.Status.Denied {
			return true, allowTTL, nil
		}
		return false, denyTTL, nil
	})
}

// remember answers key from cache while its answer lasts, else asks and
// keeps the answer for the time ask gives. A failure to ask is not kept.
func remember[V any](g *guard, cache *ttlcache.Cache[[sha256.Size]byte, V], key [sha256.Size]byte, ask func() (V, time.Duration, error)) (V, error) {
	g.mu.Lock()
	v, ok := cache.Get(key, g.now())
	g.mu.Unlock()
	if ok {
		return v, nil
	}
	v, ttl, err := ask()
	if err != nil {
		return v, err
	}
	now := g.now()
	g.mu.Lock()
	cache.Put(key, v, now, now.Add(ttl))
	g.mu.Unlock()
	return v, nil
}

// decisionKey hashes everything a SubjectAccessReview was asked about, each
// part length-prefixed so that no two questions share a key.
func decisionKey(user *authenticationv1.UserInfo, verb, path string) [sha256.Size]byte {
	var b strings.Builder
	part := func(s string) { fmt.Fprintf(&b, "%d:%s", len(s), s) }
	part(user.Username)
	part(user.UID)
	part(verb)
	part(path)
	for _, g := range user.Groups {
		part(g)
	}
	b.WriteByte('|')
	keys := make([]string, 0, len(user.Extra))
	for k := range user.Extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		part(k)
		for _, v := range user.Extra[k] {
			part(v)
		}
		b.WriteByte(';')
	}
	return sha256.Sum256([]byte(b.String()))
}
