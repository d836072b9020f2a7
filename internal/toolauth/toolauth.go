package toolauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loadout-dev/loadout/internal/ttlcache"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Audience is the audience of the token the agent-pod admission policy
// projects into hostd's container and hostd presents (--service-token-file).
const Audience = "loadout.dev/hostd"

// WorkspaceLabel binds an agent pod to its Workspace (admission policy
// loadout-agent-pods; the label cannot be added or changed on a running pod).
const WorkspaceLabel = "loadout.dev/workspace"

// The user extras a TokenReview of a pod-bound ServiceAccount token carries.
const (
	extraPodName = "authentication.kubernetes.io/pod-name"
	extraPodUID  = "authentication.kubernetes.io/pod-uid"
)

const saPrefix = "system:serviceaccount:"

// Defaults of Options left unset.
const (
	DefaultCacheTTL     = 30 * time.Second
	DefaultCacheEntries = 1024
)

// NamespaceFile is where a pod's own namespace is mounted with its
// ServiceAccount token.
const NamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Caller is who a verified call came from.
type Caller struct {
	Namespace      string
	Pod            string
	PodUID         string
	ServiceAccount string
	// Workspace is the name of the Workspace the pod is bound to (its
	// loadout.dev/workspace label), in Namespace.
	Workspace string
}

// Error is a refused call: Status is 401 (no token, or one the API server
// does not accept for the audience) or 403 (a valid token of a caller this
// Service does not serve), Reason says why without repeating the token.
type Error struct {
	Status int
	Reason string
}

func (e *Error) Error() string { return e.Reason }

func unauthorized(format string, a ...any) error {
	return &Error{Status: http.StatusUnauthorized, Reason: fmt.Sprintf(format, a...)}
}

func forbidden(format string, a ...any) error {
	return &Error{Status: http.StatusForbidden, Reason: fmt.Sprintf(format, a...)}
}

// Options configure a Verifier.
type Options struct {
	// Client creates TokenReviews (authentication.k8s.io, create on
	// tokenreviews: the ClusterRole system:auth-delegator grants it) and
	// gets pods in the allowed namespaces.
	Client kubernetes.Interface
	// Audience the token must carry; empty means Audience.
	Audience string
	// Namespaces a caller may come from. Empty means the Service's own
	// namespace, read from NamespaceFile: a tool Service serves the agent
	// pods of the namespace whose Extensions name it.
	Namespaces []string
	// AllNamespaces accepts callers of every namespace (the manager's own
	// endpoints, which serve every tenant); Namespaces is then ignored.
	AllNamespaces bool
	// CheckPod, when set, is one more condition on the token's pod (read
	// from the API server after the token review); its error refuses the
	// call with 403.
	CheckPod func(*corev1.Pod) error
	// CacheTTL is how long an accepted token is accepted again without a
	// review; zero means DefaultCacheTTL. Refusals are never cached.
	CacheTTL time.Duration
	// CacheEntries bounds the cache; zero means DefaultCacheEntries.
	CacheEntries int
	// Now is the clock of the cache; nil means time.Now.
	Now func() time.Time
}

// Verifier checks hostd's tokens. It is safe for concurrent use.
type Verifier struct {
	opts Options

	mu    sync.Mutex
	cache *ttlcache.Cache[[sha256.Size]byte, Caller]
}

// New returns a Verifier.
func New(opts Options) (*Verifier, error) {
	if opts.Client == nil {
		return nil, errors.New("toolauth: no Kubernetes client")
	}
	if opts.Audience == "" {
		opts.Audience = Audience
	}
	if len(opts.Namespaces) == 0 && !opts.AllNamespaces {
		b, err := os.ReadFile(NamespaceFile)
		if err != nil || strings.TrimSpace(string(b)) == "" {
			return nil, fmt.Errorf("toolauth: no namespaces allowed and this pod's own is unknown (%s): %w", NamespaceFile, err)
		}
		opts.Namespaces = []string{strings.TrimSpace(string(b))}
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = DefaultCacheTTL
	}
	if opts.CacheEntries <= 0 {
		opts.CacheEntries = DefaultCacheEntries
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Verifier{opts: opts, cache: ttlcache.New[[sha256.Size]byte, Caller](opts.CacheEntries)}, nil
}

// BearerToken returns the token of an "Authorization: Bearer" header, or "".
func BearerToken(h http.Header) string {
	v := h.Get("Authorization")
	if len(v) < 7 || !strings.EqualFold(v[:7], "bearer ") {
		return ""
	}
	return strings.TrimSpace(v[7:])
}

// VerifyRequest verifies the bearer token of r (Verify).
func (v *Verifier) VerifyRequest(r *http.Request) (*Caller, error) {
	return v.Verify(r.Context(), BearerToken(r.Header))
}

// Verify accepts token when the API server says it is a ServiceAccount token
// for the audience, bound to a pod that still exists, in an allowed
// namespace, and the pod is bound to a Workspace. Errors are *Error.
func (v *Verifier) Verify(ctx context.Context, token string) (*Caller, error) {
	if token == "" {
		return nil, unauthorized("no bearer token: calls must come through hostd, which presents a ServiceAccount token with audience %s", v.opts.Audience)
	}
	key := sha256.Sum256([]byte(token))
	now := v.opts.Now()
	v.mu.Lock()
	if caller, ok := v.cache.Get(key, now); ok {
		v.mu.Unlock()
		return &caller, nil
	}
	v.mu.Unlock()

	caller, err := v.review(ctx, token)
	if err != nil {
		return nil, err
	}
	v.remember(key, *caller, now)
	return caller, nil
}

func (v *Verifier) review(ctx context.Context, token string) (*Caller, error) {
	tr, err := v.opts.Client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{v.opts.Audience}},
	}, metav1.CreateOptions{})
	if err != nil {
		// The Service cannot tell; the caller may try again.
		return nil, &Error{Status: http.StatusServiceUnavailable, Reason: "token review failed: " + err.Error()}
	}
	st := tr.Status
	if !st.Authenticated {
		reason := "the API server does not accept the token"
		if st.Error != "" {
			reason += ": " + st.Error
		}
		return nil, unauthorized("%s (audience %s)", reason, v.opts.Audience)
	}
	if !slices.Contains(st.Audiences, v.opts.Audience) {
		return nil, unauthorized("the token is not for audience %s", v.opts.Audience)
	}
	user := st.User.Username
	ns, sa, ok := strings.Cut(strings.TrimPrefix(user, saPrefix), ":")
	if !strings.HasPrefix(user, saPrefix) || !ok || ns == "" || sa == "" {
		return nil, forbidden("%s is not a ServiceAccount: only hostd's projected token is accepted", user)
	}
	if !v.opts.AllNamespaces && !slices.Contains(v.opts.Namespaces, ns) {
		return nil, forbidden("a call from namespace %s; this Service serves %s", ns, strings.Join(v.opts.Namespaces, ", "))
	}
	pod, podUID := one(st.User.Extra[extraPodName]), one(st.User.Extra[extraPodUID])
	if pod == "" {
		return nil, forbidden("the token of %s is not bound to a pod: only the token the kubelet projects into hostd's container is accepted", user)
	}
	// The pod's label, not anything the call says, names the Workspace:
	// admission fixes it at creation and refuses any change.
	p, err := v.opts.Client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, forbidden("pod %s/%s is gone", ns, pod)
	case err != nil:
		return nil, &Error{Status: http.StatusServiceUnavailable, Reason: fmt.Sprintf("reading pod %s/%s: %v", ns, pod, err)}
	case podUID != "" && string(p.UID) != podUID:
		return nil, forbidden("pod %s/%s was replaced since its token was issued", ns, pod)
	}
	ws := p.Labels[WorkspaceLabel]
	if ws == "" {
		return nil, forbidden("pod %s/%s is not bound to a Workspace (no %s label): no hostd governs its calls", ns, pod, WorkspaceLabel)
	}
	if v.opts.CheckPod != nil {
		if err := v.opts.CheckPod(p); err != nil {
			return nil, forbidden("pod %s/%s: %v", ns, pod, err)
		}
	}
	return &Caller{Namespace: ns, Pod: pod, PodUID: string(p.UID), ServiceAccount: sa, Workspace: ws}, nil
}

func one(vs authenticationv1.ExtraValue) string {
	if len(vs) != 1 {
		return ""
	}
	return vs[0]
}

// remember caches an accepted caller.
func (v *Verifier) remember(key [sha256.Size]byte, c Caller, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cache.Put(key, c, now, now.Add(v.opts.CacheTTL))
}

type callerKey struct{}

// FromContext returns the Caller Middleware verified.
func FromContext(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	return c, ok
}

// Middleware serves next only calls Verify accepts, with the Caller in the
// request's context (FromContext); others get the Error's status and
// reason as {"error": reason}.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := v.VerifyRequest(r)
		if err != nil {
			Refuse(w, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

// Refuse answers err as Verify's refusal: its status (500 for another
// error), and {"error": reason}; a 401 names the Bearer scheme.
func Refuse(w http.ResponseWriter, err error) {
	status, reason := http.StatusInternalServerError, err.Error()
	var e *Error
	if errors.As(err, &e) {
		status = e.Status
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="loadout-hostd"`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "refused: " + reason})
}
