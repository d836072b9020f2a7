package approval

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/internal/caroots"
)

// maxObjectBytes bounds one answer of the API server: an Approval holds at
// most hostd's 1 MiB of arguments.
const maxObjectBytes = 2 << 20

// Client creates, reads and watches the Approvals of one namespace as the
// identity of a token file (re-read on every request: the kubelet rotates
// it).
type Client struct {
	server    string
	namespace string
	tokenFile string
	http      *http.Client
}

// Config configures a Client.
type Config struct {
	// Server is the API server's base URL (https://host:port).
	Server string
	// CAFile verifies the API server's certificate; empty means the system
	// roots.
	CAFile string
	// CAData is CAFile's content, for tests.
	CAData []byte
	// TokenFile is the bearer token (a projected ServiceAccount token).
	TokenFile string
	// Namespace is where Approvals are created: the pod's own.
	Namespace string
}

// InClusterServer is the API server's URL from the environment every pod
// gets (KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT).
func InClusterServer() (string, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return "", errors.New("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not in a pod")
	}
	return "https://" + net.JoinHostPort(host, port), nil
}

// New returns a Client; the token is first read at the first request.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.Server)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("approvals: the API server %q is not an https URL", cfg.Server)
	}
	if cfg.Namespace == "" || cfg.TokenFile == "" {
		return nil, errors.New("approvals: a namespace and a token file are required")
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	ca := cfg.CAData
	if cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("approvals: the API server's CA: %w", err)
		}
	}
	if len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("approvals: the API server's CA holds no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	transport := &http.Transport{TLSClientConfig: tlsConfig, Proxy: nil, ForceAttemptHTTP2: true,
		TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 30 * time.Second, IdleConnTimeout: 90 * time.Second}
	return &Client{server: strings.TrimSuffix(cfg.Server, "/"), namespace: cfg.Namespace, tokenFile: cfg.TokenFile,
		http: &http.Client{Transport: caroots.Transport(transport), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

// Namespace is where the Client's Approvals live.
func (c *Client) Namespace() string { return c.namespace }

func (c *Client) collection() string {
	return c.server + "/apis/loadout.dev/v1alpha1/namespaces/" + url.PathEscape(c.namespace) + "/" + resource
}

func (c *Client) token() (string, error) {
	b, err := os.ReadFile(c.tokenFile)
	if err != nil {
		return "", fmt.Errorf("approvals: the ServiceAccount token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (c *Client) do(ctx context.Context, method, u string, body []byte) (*http.Response, error) {
	tok, err := c.token()
	if err != nil {
		return nil, err
	}
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.http.Do(req)
}

// StatusError is an answer other than 2xx, with the API server's message.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("the API server answered %d: %s", e.Code, e.Message)
}

func readObject(resp *http.Response) (*Object, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxObjectBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxObjectBytes {
		return nil, fmt.Errorf("the API server's answer is over %d bytes", maxObjectBytes)
	}
	if resp.StatusCode/100 != 2 {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(b, &st)
		if st.Message == "" {
			st.Message = http.StatusText(resp.StatusCode)
		}
		return nil, &StatusError{Code: resp.StatusCode, Message: st.Message}
	}
	var o Object
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("the API server's answer is not an Approval: %w", err)
	}
	return &o, nil
}

// Create creates o in the Client's namespace and returns it as stored.
func (c *Client) Create(ctx context.Context, o *Object) (*Object, error) {
	o.APIVersion, o.Kind, o.Metadata.Namespace = APIVersion, Kind, c.namespace
	body, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, http.MethodPost, c.collection(), body)
	if err != nil {
		return nil, err
	}
	return readObject(resp)
}

// Get reads the Approval name.
func (c *Client) Get(ctx context.Context, name string) (*Object, error) {
	resp, err := c.do(ctx, http.MethodGet, c.collection()+"/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, err
	}
	return readObject(resp)
}

// ErrDeleted is an Approval deleted while hostd waited on it.
var ErrDeleted = errors.New("the Approval was deleted")

// WaitDecided returns the Approval name once it carries a decision, or
// ctx's error. It reads the object, then watches it from that version; a
// watch the API server ends is opened again from the last version seen.
func (c *Client) WaitDecided(ctx context.Context, name string) (*Object, error) {
	for {
		o, err := c.Get(ctx, name)
		var se *StatusError
		switch {
		case errors.As(err, &se) && se.Code == http.StatusNotFound:
			return nil, ErrDeleted
		case err != nil:
			return nil, err
		case o.decided():
			return o, nil
		}
		o, err = c.watch(ctx, name, o.Metadata.ResourceVersion)
		if err != nil || o != nil {
			return o, err
		}
		// The watch ended (its timeout, a restarted API server): read again.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// watch follows the one object from rv; nil, nil when the stream ended
// without a decision.
func (c *Client) watch(ctx context.Context, name, rv string) (*Object, error) {
	q := url.Values{"watch": {"true"}, "fieldSelector": {"metadata.name=" + name}, "resourceVersion": {rv},
		"timeoutSeconds": {"300"}, "allowWatchBookmarks": {"true"}}
	resp, err := c.do(ctx, http.MethodGet, c.collection()+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		_, err := readObject(resp)
		return nil, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(bufio.NewReader(io.LimitReader(resp.Body, 64<<20)))
	for {
		var ev watchEvent
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, nil
		}
		switch ev.Type {
		case "DELETED":
			return nil, ErrDeleted
		case "ERROR":
			// Too old a version, say: read the object again.
			return nil, nil
		case "ADDED", "MODIFIED":
			var o Object
			if err := json.Unmarshal(ev.Object, &o); err != nil {
				return nil, fmt.Errorf("a watch event is not an Approval: %w", err)
			}
			if o.Metadata.Name == name && o.decided() {
				return &o, nil
			}
		}
	}
}

// Identity is who a ServiceAccount token says it is: its subject, and the
// namespace, ServiceAccount and pod it is bound to.
type Identity struct {
	User           string
	Namespace      string
	ServiceAccount string
	Pod            string
	// PodUID is the bound pod's UID: an Approval names its pod as owner,
	// so the garbage collector deletes a pod's Approvals with the pod.
	PodUID string
}

// TokenIdentity reads a projected ServiceAccount token's claims without
// verifying them: it is hostd's own token, and admission compares what
// hostd writes with the identity the API server authenticated.
func TokenIdentity(tokenFile string) (Identity, error) {
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return Identity{}, err
	}
	parts := strings.Split(strings.TrimSpace(string(b)), ".")
	if len(parts) != 3 {
		return Identity{}, errors.New("the token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return Identity{}, fmt.Errorf("the token's claims: %w", err)
	}
	var claims struct {
		Sub string `json:"sub"`
		K8s struct {
			Namespace      string `json:"namespace"`
			ServiceAccount struct {
				Name string `json:"name"`
			} `json:"serviceaccount"`
			Pod *struct {
				Name string `json:"name"`
				UID  string `json:"uid"`
			} `json:"pod"`
		} `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return Identity{}, fmt.Errorf("the token's claims: %w", err)
	}
	id := Identity{User: claims.Sub, Namespace: claims.K8s.Namespace, ServiceAccount: claims.K8s.ServiceAccount.Name}
	if claims.K8s.Pod != nil {
		id.Pod, id.PodUID = claims.K8s.Pod.Name, claims.K8s.Pod.UID
	}
	if id.User == "" || id.ServiceAccount == "" || id.Namespace == "" {
		return Identity{}, errors.New("the token is not a ServiceAccount token (no sub, namespace or serviceaccount claim)")
	}
	return id, nil
}
