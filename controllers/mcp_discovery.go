package controllers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost/extobject"
	"github.com/loadout-dev/loadout/internal/mcpclient"
	"github.com/loadout-dev/loadout/internal/mcpheaders"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// Discovery timing: how often a discovered server is listed again (a tool
// added, changed or removed on the server reaches every Workspace within
// it), and the backoff of a failed discovery.
const (
	DefaultMCPResync        = 5 * time.Minute
	mcpDiscoveryBackoffBase = 5 * time.Second
)

// mcpMaxAnswerBytes caps each answer of a server being discovered: a page of
// a thousand tools with their schemas fits well within it.
const mcpMaxAnswerBytes = 4 << 20

// mcpDiscoverer lists the tools of Extensions' MCP servers into their
// status.mcpServer (docs/agents.md): the Workspaces' registries are built
// from there, so no Workspace reconcile contacts an MCP server.
type mcpDiscoverer struct {
	doer    outbound.Doer
	resolve extobject.WebhookResolver
	resync  time.Duration
	// secrets reads headersFrom Secrets past the cache (the manager caches
	// no Secrets; it may read only the platform namespaces').
	secrets client.Reader
	// events records a pinned tool's drift on its Extension (mcp_pins.go);
	// nil records none.
	events events.EventRecorder

	mu       sync.Mutex
	failures map[types.NamespacedName]int
}

func newMCPDiscoverer(doer outbound.Doer, resync time.Duration, secrets client.Reader) *mcpDiscoverer {
	if doer == nil {
		doer = outbound.New(outbound.Options{MaxResponseBytes: mcpMaxAnswerBytes})
	}
	if resync <= 0 {
		resync = DefaultMCPResync
	}
	return &mcpDiscoverer{doer: doer, resync: resync, secrets: secrets, failures: map[types.NamespacedName]int{}}
}

// discover brings e's status.mcpServer and ToolsDiscovered condition up to
// date and says when to look again (zero: only when something changes). The
// server is contacted only for an Extension that loads where it is (rule
// R-EXT-1) and whose spec names a server its namespace may name. A failure
// keeps the last good list and is retried with exponential backoff.
func (d *mcpDiscoverer) discover(ctx context.Context, e *v1alpha1.Extension, policy workspace.Policy, trust vocab.TrustLevel) time.Duration {
	s := e.Spec.MCPServer
	if s == nil {
		e.Status.MCPServer = nil
		meta.RemoveStatusCondition(&e.Status.Conditions, string(vocab.ConditionToolsDiscovered))
		meta.RemoveStatusCondition(&e.Status.Conditions, string(vocab.ConditionToolsPinned))
		d.forget(client.ObjectKeyFromObject(e))
		return 0
	}
	if !workspace.LoadsExtensions(trust) {
		d.setCondition(e, metav1.ConditionFalse, vocab.ReasonDiscoveryNotAllowed,
			fmt.Sprintf("namespace %s is %s and loads no extensions: its MCP server is never contacted", e.Namespace, trust))
		return 0
	}
	platform := slices.Contains(policy.PlatformNamespaces, e.Namespace)
	ep, ferr := extobject.ResolveMCPServer(e.Namespace, platform, s, d.resolve)
	if ferr != nil {
		d.setCondition(e, metav1.ConditionFalse, vocab.ReasonDiscoveryNotAllowed, ferr.Error()+": the server is not contacted")
		return 0
	}
	endpoint := mcpclient.Endpoint{URL: ep.URL, CABundle: ep.CABundle, Timeout: ep.Timeout, Anonymous: ep.External}
	var found mcpclient.Discovery
	headers, err := d.headers(ctx, e)
	if err == nil {
		if headers != nil {
			endpoint.Headers = func(context.Context) (http.Header, error) { return headers, nil }
		}
		found, err = mcpclient.Discover(ctx, d.doer, endpoint, mcpclient.Selection{Allow: s.Tools.Allow, Prefix: s.Tools.Prefix})
	}
	var st *v1alpha1.MCPServerStatus
	if err == nil {
		st, err = extobject.DiscoveredStatus(ep.URL, found)
	}
	if err != nil {
		kept := "no tools were discovered before"
		if st := e.Status.MCPServer; st != nil {
			kept = fmt.Sprintf("the last good list (%d tools from %s) stays", len(st.Tools), st.Endpoint)
		}
		d.setCondition(e, metav1.ConditionFalse, vocab.ReasonDiscoveryFailed,
			truncate(fmt.Sprintf("listing the tools of %s failed: %v; %s; retried with backoff", ep.URL, err, kept), 4096))
		return d.backoff(client.ObjectKeyFromObject(e))
	}
	d.forget(client.ObjectKeyFromObject(e))
	var last []v1alpha1.DiscoveredTool
	if prev := e.Status.MCPServer; prev != nil && prev.Endpoint == ep.URL {
		last = prev.Tools // a definition from another endpoint is nobody's last good one
	}
	st.Tools = d.pin(e, st.Tools, last)
	e.Status.MCPServer = st
	d.setCondition(e, metav1.ConditionTrue, vocab.ReasonDiscovered,
		fmt.Sprintf("%d tools listed at %s; listed again every %s", len(found.Tools), ep.URL, d.resync))
	return d.resync
}

// headers reads the headers of e's MCP server from its headersFrom Secret
// (nil without one). Errors name the Secret and key, never a value.
func (d *mcpDiscoverer) headers(ctx context.Context, e *v1alpha1.Extension) (http.Header, error) {
	from := e.Spec.MCPServer.HeadersFrom
	if from == nil {
		return nil, nil
	}
	if d.secrets == nil {
		return nil, errors.New("spec.mcpServer.headersFrom: this manager reads no Secrets")
	}
	secret := &corev1.Secret{}
	if err := d.secrets.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: from.SecretRef.Name}, secret); err != nil {
		return nil, fmt.Errorf("spec.mcpServer.headersFrom: Secret %s/%s: %w", e.Namespace, from.SecretRef.Name, err)
	}
	h, err := mcpheaders.FromSecret(secret.Namespace+"/"+secret.Name, secret.Data, from.Keys)
	if err != nil {
		return nil, fmt.Errorf("spec.mcpServer.headersFrom: %w", err)
	}
	return h, nil
}

func (d *mcpDiscoverer) setCondition(e *v1alpha1.Extension, status metav1.ConditionStatus, reason vocab.ConditionReason, msg string) {
	meta.SetStatusCondition(&e.Status.Conditions, metav1.Condition{Type: string(vocab.ConditionToolsDiscovered), Status: status,
		Reason: string(reason), Message: msg, ObservedGeneration: e.Generation})
}

// backoff counts a failure and returns the wait before the next attempt:
// 5 s, doubling, at most the resync interval.
func (d *mcpDiscoverer) backoff(key types.NamespacedName) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.failures[key]
	d.failures[key] = n + 1
	wait := mcpDiscoveryBackoffBase << min(n, 16)
	return min(wait, d.resync)
}

func (d *mcpDiscoverer) forget(key types.NamespacedName) {
	d.mu.Lock()
	delete(d.failures, key)
	d.mu.Unlock()
}

// mcpToolsChanged passes Extension updates whose discovered MCP tools
// changed: the Workspaces' registries are built from them.
func mcpToolsChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*v1alpha1.Extension)
			n, ok2 := e.ObjectNew.(*v1alpha1.Extension)
			return ok1 && ok2 && !equality.Semantic.DeepEqual(o.Status.MCPServer, n.Status.MCPServer)
		},
	}
}
