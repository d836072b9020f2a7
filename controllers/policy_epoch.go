package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/shard"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// DefaultPolicyGrace is how long a namespace's epoch keeps accepting the
// platform policy it replaced (--policy-grace).
const DefaultPolicyGrace = 2 * time.Minute

// EpochPolicyAnnotation on the epoch ConfigMap holds the digest its
// policy.json names, so the reconciler compares against cached metadata
// and writes nothing at rest.
const EpochPolicyAnnotation = "loadout.dev/platform-policy"

// epochRetry is how soon a namespace whose platform policy does not load (an
// imposed extension rejected, its manifest Service down) is looked at again.
const epochRetry = 30 * time.Second

// PolicyEpochReconciler keeps, in every namespace that holds a Workspace, the
// ConfigMap loadout-policy naming the digest of the platform's current
// policy for that namespace (contract.PolicyEpoch), signed like a context.
// The agent-pod policy mounts it into hostd, which serves a context only
// while the epoch names the platform policy the context carries: a context
// a tenant froze (docs/security.md, "A stale context outlives a platform
// change") stops being served once the grace runs out.
//
// It writes only when the digest changes (or the signing key set does):
// one write per namespace per platform change, none at rest, no periodic
// refresh. The epoch has no owner: it belongs to the namespace.
type PolicyEpochReconciler struct {
	Client    client.Client
	APIReader client.Reader
	Policy    workspace.Policy
	Loader    workspace.ExtensionLoader
	// Signer signs each epoch; nil writes unsigned ones (tests).
	Signer *contextsig.Signer
	// Grace is how long the replaced digest stays valid (previous.until).
	Grace time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Shard, when set, is the slice of namespaces this process owns: it
	// writes only their epochs (nil owns every namespace).
	Shard *shard.Ownership

	mu sync.Mutex
	// written is, per namespace, the digest and signers of our last write:
	// when the cache has not seen that write yet, a live read (not a second
	// write) decides.
	written map[string]string
}

// SetupWithManager registers the reconciler, keyed by namespace: the
// platform's Extensions (every namespace with Workspaces), a Namespace's
// labels (that namespace; a platform namespace's, all), a Workspace created
// or deleted (its namespace) and the epoch ConfigMap itself (its namespace:
// one deleted or edited by hand is written again).
func (r *PolicyEpochReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Loader == nil {
		r.Loader = workspace.HostLoader{}
	}
	if r.Grace <= 0 {
		r.Grace = DefaultPolicyGrace
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	createOrDelete := builder.WithPredicates(predicate.Funcs{
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})
	inputChanged := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))
	return ctrl.NewControllerManagedBy(mgr).
		Named("policy-epoch").
		Watches(&v1alpha1.Workspace{}, handler.EnqueueRequestsFromMapFunc(namespaceOf), createOrDelete).
		Watches(&v1alpha1.Extension{}, handler.EnqueueRequestsFromMapFunc(r.namespacesForExtension), inputChanged).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.namespacesForNamespace),
			builder.OnlyMetadata, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.epochsForConfigMap), builder.OnlyMetadata).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Complete(r)
}

func epochRequest(ns string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: ns}}
}

func namespaceOf(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{epochRequest(o.GetNamespace())}
}

// namespacesForExtension maps an Extension of a platform namespace to every
// namespace that holds a Workspace; any other Extension imposes nothing.
func (r *PolicyEpochReconciler) namespacesForExtension(ctx context.Context, o client.Object) []reconcile.Request {
	if !slices.Contains(r.Policy.PlatformNamespaces, o.GetNamespace()) {
		return nil
	}
	return r.allNamespaces(ctx)
}

// namespacesForNamespace maps a Namespace's labels to its own epoch (the
// platform's namespace selectors), and a platform namespace's (its trust
// label) to every epoch.
func (r *PolicyEpochReconciler) namespacesForNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	if slices.Contains(r.Policy.PlatformNamespaces, o.GetName()) {
		return r.allNamespaces(ctx)
	}
	return []reconcile.Request{epochRequest(o.GetName())}
}

// allNamespaces lists the namespaces that hold a Workspace, from the cache.
func (r *PolicyEpochReconciler) allNamespaces(ctx context.Context) []reconcile.Request {
	var list v1alpha1.WorkspaceList
	if err := r.Client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Workspaces for the policy epochs failed")
		return nil
	}
	seen := map[string]bool{}
	var reqs []reconcile.Request
	for i := range list.Items {
		if ns := list.Items[i].Namespace; !seen[ns] {
			seen[ns] = true
			reqs = append(reqs, epochRequest(ns))
		}
	}
	return reqs
}

// Reconcile brings one namespace's epoch to the platform's current policy.
func (r *PolicyEpochReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := req.Name
	if !r.Shard.Owns(ns) {
		return ctrl.Result{}, nil // another shard's namespace
	}
	var list v1alpha1.WorkspaceList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns), client.Limit(1)); err != nil {
		return ctrl.Result{}, err
	}
	if len(list.Items) == 0 {
		return ctrl.Result{}, nil // no Workspace, no agent pod to serve: nothing to write
	}
	// The platform's policy for the namespace: the value every Workspace's
	// resolution of the namespace takes, so its digest is the one their
	// contexts carry.
	imp, err := workspace.PlatformPolicyOf(ctx, ns, cachedObjects{cache: r.Client, reader: r.APIReader}, r.Policy, r.Loader)
	if err != nil {
		return ctrl.Result{}, err
	}
	if imp.Broken != "" {
		// The Workspaces keep their last good contexts, with the last good
		// policy (the platform's own policy is the platform's to fix); the
		// epoch keeps naming it.
		log.FromContext(ctx).Error(nil, "The platform's policy does not load; the policy epoch stays", "namespace", ns, "reason", imp.Broken)
		return ctrl.Result{RequeueAfter: epochRetry}, nil
	}
	digest := imp.Digest()
	signers := ""
	if r.Signer != nil {
		signers = strings.Join(r.Signer.KeyIDs(), ",")
	}
	// The admission policy's word (agentsUnderLoadoutSandbox) rides on the
	// epoch: the platform digest already changes with it, the annotation
	// makes an epoch written before it existed current too.
	underSandbox := strconv.FormatBool(imp.Sandbox != nil && imp.Sandbox.AgentsUnderLoadoutSandbox)
	existing := configMapMetadata()
	err = r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: contract.EpochConfigMap}, existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	found := err == nil
	if found && metav1.GetControllerOf(existing) != nil {
		// A Workspace publishes to this name (spec.output.configMapName):
		// not ours to overwrite. Its agent pods get no valid epoch and fail
		// closed.
		log.FromContext(ctx).Error(nil, "ConfigMap loadout-policy is controlled by another object; the namespace has no policy epoch", "namespace", ns,
			"controller", metav1.GetControllerOf(existing).Name)
		return ctrl.Result{}, nil
	}
	current := func(o client.Object) bool {
		a := o.GetAnnotations()
		return a[EpochPolicyAnnotation] == digest && a[vocab.ContextSignersAnnotation] == signers &&
			a[contract.AgentsUnderSandboxAnnotation] == underSandbox && o.GetLabels()[contract.EpochLabel] == "true"
	}
	if found && current(existing) {
		return ctrl.Result{}, nil // at rest: no write
	}
	if r.wrote(ns) == digest+"|"+signers+"|"+underSandbox {
		// Our last write was this one: the cache may not have seen it yet.
		live := configMapMetadata()
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: contract.EpochConfigMap}, live)
		if err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if err == nil && current(live) {
			return ctrl.Result{}, nil
		}
		if found = err == nil; found {
			existing = live
		}
	}
	ann := existing.GetAnnotations()
	epoch := contract.PolicyEpoch{Namespace: ns, PlatformPolicy: digest}
	if found && ann[EpochPolicyAnnotation] == digest {
		// The same policy, re-signed (a new key set) or relabelled: keep
		// the grace of the change in progress.
		if epoch.Previous, err = r.previousOf(ctx, ns, digest); err != nil {
			return ctrl.Result{}, err
		}
	} else if old := ann[EpochPolicyAnnotation]; found && old != "" {
		epoch.Previous = &contract.PreviousPolicy{PlatformPolicy: old, Until: r.Now().Add(r.Grace).UTC().Truncate(time.Second)}
	}
	raw, err := json.Marshal(epoch)
	if err != nil {
		return ctrl.Result{}, err
	}
	data := map[string]string{contract.KeyPolicy: string(raw)}
	if r.Signer != nil {
		data[contract.KeySignature] = string(r.Signer.SignEpoch(contract.EpochHash(raw), ns, contract.EpochConfigMap))
	}
	cm := corev1ac.ConfigMap(contract.EpochConfigMap, ns).
		WithLabels(map[string]string{contract.EpochLabel: "true"}).
		WithAnnotations(map[string]string{EpochPolicyAnnotation: digest, vocab.ContextSignersAnnotation: signers,
			contract.AgentsUnderSandboxAnnotation: underSandbox}).
		WithData(data)
	if err := r.Client.Apply(ctx, cm, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return ctrl.Result{}, fmt.Errorf("applying the policy epoch %s/%s: %w", ns, contract.EpochConfigMap, err)
	}
	r.record(ns, digest+"|"+signers+"|"+underSandbox)
	policyEpochWrites.Inc()
	log.FromContext(ctx).Info("Policy epoch written", "namespace", ns, "platformPolicy", digest, "previous", epoch.Previous)
	return ctrl.Result{}, nil
}

func (r *PolicyEpochReconciler) wrote(ns string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written[ns]
}

func (r *PolicyEpochReconciler) record(ns, v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written == nil {
		r.written = map[string]string{}
	}
	r.written[ns] = v
}

// previousOf reads the live epoch's previous policy, if it is still the one
// replaced by digest.
func (r *PolicyEpochReconciler) previousOf(ctx context.Context, ns, digest string) (*contract.PreviousPolicy, error) {
	var cm corev1.ConfigMap
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: contract.EpochConfigMap}, &cm); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	var old contract.PolicyEpoch
	if json.Unmarshal([]byte(cm.Data[contract.KeyPolicy]), &old) != nil || old.PlatformPolicy != digest || old.Previous == nil || !r.Now().Before(old.Previous.Until) {
		return nil, nil
	}
	return old.Previous, nil
}

// policyEpochWrites counts the epoch ConfigMaps written: one per namespace
// per platform change, none at rest (docs/benchmarks.md).
var policyEpochWrites = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "loadout_policy_epoch_writes_total",
	Help: "Server-side applies of policy epoch ConfigMaps (loadout-policy), one per namespace per platform policy change.",
})

func init() { metrics.Registry.MustRegister(policyEpochWrites) }
