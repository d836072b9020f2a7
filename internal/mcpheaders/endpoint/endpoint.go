// Package endpoint is the manager's HTTPS endpoint that gives hostd the
// request headers of platform MCP servers (docs/security.md): it reviews the
// caller's pod-bound token, checks that the pod was admitted as bound to a
// Workspace, and answers only for a platform Extension that applies to that
// Workspace. It is the manager's side of internal/mcpheaders, apart from the
// reconcilers: it serves requests, it reconciles nothing.
package endpoint

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/exthost/extobject"
	"github.com/loadout-dev/loadout/internal/httpserve"
	"github.com/loadout-dev/loadout/internal/mcpheaders"
	"github.com/loadout-dev/loadout/internal/toolauth"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// Defaults of the MCP headers endpoint: its Service and the Secret holding
// its certificate, both in the manager's namespace.
const (
	DefaultService   = "loadout-mcp-headers"
	DefaultTLSSecret = "loadout-mcp-headers-tls"
	hostdContainer   = "loadout-hostd"
)

// The endpoint reviews hostd's tokens and reads their pods cluster-wide;
// Secrets it reads only in the manager's namespace (config/rbac/signing_role.yaml).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups="",resources=pods,verbs=get

// Endpoint answers hostd's requests for the headers of the MCP
// servers of platform Extensions (docs/security.md): only to a caller whose
// token the API server issued for mcpheaders.Audience, bound to a pod that
// still exists, carries a Workspace label and runs loadout-hostd first
// (so it was admitted as a bound pod), and only for an Extension of a
// platform namespace that applies to that Workspace.
type Endpoint struct {
	// Verifier checks the caller's token (audience mcpheaders.Audience,
	// every namespace, CheckBoundPod).
	Verifier *toolauth.Verifier
	// Reader reads Extensions, Workspaces, Namespaces and Secrets past the
	// cache: the answer follows the cluster now, not a shard's cache.
	Reader  client.Reader
	Policy  workspace.Policy
	Resolve extobject.WebhookResolver
	Log     logr.Logger
}

// CheckBoundPod is the endpoint's pod check: the admission policies put
// loadout-hostd first among a bound pod's init containers, and a pod
// cannot be bound after its creation.
func CheckBoundPod(p *corev1.Pod) error {
	if len(p.Spec.InitContainers) == 0 || p.Spec.InitContainers[0].Name != hostdContainer {
		return fmt.Errorf("%s is not its first init container: not a pod admitted as bound to a Workspace", hostdContainer)
	}
	return nil
}

// refusal is an answer other than the headers: its status and a reason
// naming objects, never a header value.
type refusal struct {
	status int
	reason string
}

func (r *refusal) Error() string { return r.reason }

func refuse(status int, format string, a ...any) error {
	return &refusal{status: status, reason: fmt.Sprintf(format, a...)}
}

func (h *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ans, caller, ext, err := h.answer(r)
	if err != nil {
		var status int
		var ref *refusal
		var terr *toolauth.Error
		switch {
		case errors.As(err, &ref):
			status = ref.status
		case errors.As(err, &terr):
			status = terr.Status
		default:
			status = http.StatusServiceUnavailable
		}
		h.Log.Info("MCP headers refused", "caller", caller, "extension", ext, "status", status, "reason", err.Error())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "refused: " + err.Error()})
		return
	}
	h.Log.V(1).Info("MCP headers given", "caller", caller, "extension", ext, "headers", len(ans.Headers))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(ans)
}

func (h *Endpoint) answer(r *http.Request) (ans *mcpheaders.Answer, caller, extension string, err error) {
	if r.Method != http.MethodPost || r.URL.Path != mcpheaders.Path {
		return nil, "", "", refuse(http.StatusNotFound, "only POST %s", mcpheaders.Path)
	}
	c, err := h.Verifier.VerifyRequest(r)
	if err != nil {
		return nil, "", "", err
	}
	caller = c.Namespace + "/" + c.Pod
	body, err := io.ReadAll(io.LimitReader(r.Body, mcpheaders.MaxRequestBytes+1))
	if err != nil || len(body) > mcpheaders.MaxRequestBytes {
		return nil, caller, "", refuse(http.StatusBadRequest, "the request body must be at most %d bytes of JSON", mcpheaders.MaxRequestBytes)
	}
	var req mcpheaders.Request
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, caller, "", refuse(http.StatusBadRequest, "the request body is not {\"extension\":\"namespace/name\"}")
	}
	ns, name, ok := strings.Cut(req.Extension, "/")
	if !ok || ns == "" || name == "" || len(req.Extension) > 317 {
		return nil, caller, "", refuse(http.StatusBadRequest, "extension %q is not namespace/name", req.Extension)
	}
	extension = req.Extension
	ans, err = h.headersFor(r.Context(), c, types.NamespacedName{Namespace: ns, Name: name})
	return ans, caller, extension, err
}

// headersFor answers the headers of Extension key to caller, if its
// Workspace carries the Extension.
func (h *Endpoint) headersFor(ctx context.Context, c *toolauth.Caller, key types.NamespacedName) (*mcpheaders.Answer, error) {
	// The same answer for a tenant namespace and a missing Extension: the
	// endpoint tells a caller nothing about what it may not read.
	notGiven := refuse(http.StatusForbidden, "Extension %s gives no MCP headers to Workspace %s/%s", key, c.Namespace, c.Workspace)
	if !slices.Contains(h.Policy.PlatformNamespaces, key.Namespace) {
		return nil, notGiven
	}
	e := &v1alpha1.Extension{}
	if err := h.Reader.Get(ctx, key, e); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notGiven
		}
		return nil, fmt.Errorf("reading Extension %s: %w", key, err)
	}
	if e.Spec.MCPServer == nil || e.Spec.MCPServer.HeadersFrom == nil {
		return nil, notGiven
	}
	applies, err := h.applies(ctx, e, c)
	if err != nil {
		return nil, err
	}
	if !applies {
		return nil, notGiven
	}
	ep, ferr := extobject.ResolveMCPServer(e.Namespace, true, e.Spec.MCPServer, h.Resolve)
	if ferr != nil {
		return nil, refuse(http.StatusConflict, "Extension %s: %v", key, ferr)
	}
	secret := &corev1.Secret{}
	from := e.Spec.MCPServer.HeadersFrom
	if err := h.Reader.Get(ctx, types.NamespacedName{Namespace: e.Namespace, Name: from.SecretRef.Name}, secret); err != nil {
		return nil, fmt.Errorf("extension %s: spec.mcpServer.headersFrom: Secret %s/%s: %w", key, e.Namespace, from.SecretRef.Name, err)
	}
	hdr, err := mcpheaders.FromSecret(secret.Namespace+"/"+secret.Name, secret.Data, from.Keys)
	if err != nil {
		return nil, refuse(http.StatusConflict, "Extension %s: spec.mcpServer.headersFrom: %v", key, err)
	}
	ans := &mcpheaders.Answer{Endpoint: ep.URL, Headers: map[string]string{}}
	for k := range hdr {
		ans.Headers[k] = hdr.Get(k)
	}
	return ans, nil
}

// applies reports whether e loads into the caller's Workspace: imposed on
// its namespace, or offered and selected by its roots. It is decided from
// the Workspace's spec and its namespace's labels, never from a status a
// tenant could write.
func (h *Endpoint) applies(ctx context.Context, e *v1alpha1.Extension, c *toolauth.Caller) (bool, error) {
	ws := &v1alpha1.Workspace{}
	if err := h.Reader.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: c.Workspace}, ws); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading Workspace %s/%s: %w", c.Namespace, c.Workspace, err)
	}
	reads := workspace.ReadsOf(ws, h.Policy)
	if workspace.Offered(e) {
		return reads.Selects(e.Namespace, e.Labels), nil
	}
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := h.Reader.Get(ctx, types.NamespacedName{Name: c.Namespace}, ns); err != nil {
		return false, fmt.Errorf("reading Namespace %s: %w", c.Namespace, err)
	}
	return reads.Imposes(e) && workspace.AppliesTo(e, ns.Labels), nil
}

// Serve serves the endpoint over TLS on addr with cert until ctx is done.
func (h *Endpoint) Serve(ctx context.Context, addr string, cert tls.Certificate) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("MCP headers endpoint: %w", err)
	}
	return h.ServeListener(ctx, ln, cert)
}

// ServeListener is Serve on an open listener.
func (h *Endpoint) ServeListener(ctx context.Context, ln net.Listener, cert tls.Certificate) error {
	srv := &http.Server{
		Handler:           http.MaxBytesHandler(h, mcpheaders.MaxRequestBytes+1),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}},
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	return httpserve.UntilDone(ctx, srv, func() error { return srv.ServeTLS(ln, "", "") })
}

// LoadCert returns the endpoint's certificate from Secret key,
// creating the Secret with a new self-signed certificate for host when it
// does not exist (the first start), and its PEM, which hostd trusts.
func LoadCert(ctx context.Context, c client.Client, key types.NamespacedName, host, fieldOwner string) (tls.Certificate, []byte, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		var certPEM, keyPEM []byte
		certPEM, keyPEM, err = mcpheaders.NewServingCert([]string{host, strings.TrimSuffix(host, ".svc")}, time.Now())
		if err != nil {
			return tls.Certificate{}, nil, err
		}
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: map[string]string{"app.kubernetes.io/name": "loadout"}},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
		}
		err = c.Create(ctx, secret, client.FieldOwner(fieldOwner))
		if apierrors.IsAlreadyExists(err) { // another replica was first
			secret = &corev1.Secret{}
			err = c.Get(ctx, key, secret)
		}
	}
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("MCP headers endpoint certificate: Secret %s: %w", key, err)
	}
	certPEM := secret.Data[corev1.TLSCertKey]
	if err := mcpheaders.CertNames(certPEM, host, time.Now()); err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("MCP headers endpoint certificate: Secret %s: %w (delete the Secret to have a new one made)", key, err)
	}
	cert, err := tls.X509KeyPair(certPEM, secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("MCP headers endpoint certificate: Secret %s: %w", key, err)
	}
	return cert, certPEM, nil
}
