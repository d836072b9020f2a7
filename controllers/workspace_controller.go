package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/ownwrites"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// FieldOwner is the server-side apply field manager of everything Loadout writes.
const FieldOwner = "loadout"

// LeaderElectionID names the Lease the manager's replicas elect a leader with
// (--leader-elect), in the manager's namespace.
const LeaderElectionID = "loadout-manager.loadout.dev"

// overlapRecheck is how soon a Workspace is looked at again when a write by
// someone else overlapped ours.
const overlapRecheck = time.Second

// importRetryInterval is how soon a Workspace retries when a trusted
// service-backed extension could not be fetched: the Service may come back
// without any object changing.
const importRetryInterval = 30 * time.Second

// WorkspaceReconciler resolves each Workspace's context and tool registry and
// publishes them as a ConfigMap in the Workspace's namespace.
type WorkspaceReconciler struct {
	client.Client
	// APIReader reads live what the cache cannot answer: instructions
	// ConfigMaps (the cache holds ConfigMap metadata only), and namespaces
	// and ConfigMaps the cache has not seen yet.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Policy    workspace.Policy
	// Loader loads extensions; the default contacts Services only for trusted
	// service-backed extensions.
	Loader workspace.ExtensionLoader
	// Signer signs every published context (internal/contextsig); the
	// manager loads it with LoadSigningKeys. Nil publishes unsigned contexts.
	Signer *contextsig.Signer
	// ReconcileTimeout bounds one pass, so a hung call never wedges a worker.
	ReconcileTimeout time.Duration
	// MaxConcurrentReconciles is the number of Workspaces reconciled at once.
	MaxConcurrentReconciles int
	// PerWorkspaceMetrics exports metrics labelled with each Workspace's
	// namespace and name (--metrics-per-workspace); off, a scraper cannot
	// enumerate tenants' Workspaces from the metrics.
	PerWorkspaceMetrics bool

	// writes tells our own ConfigMap writes and status patches from anyone
	// else's (internal/ownwrites).
	writes ownwrites.Log
}

// +kubebuilder:rbac:groups=loadout.dev,resources=workspaces;skills;templates;extensions,verbs=get;list;watch
// +kubebuilder:rbac:groups=loadout.dev,resources=workspaces/status;skills/status;templates/status;extensions/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// The context ConfigMap's owner reference blocks the Workspace's deletion
// until it is gone; with OwnerReferencesPermissionEnforcement that needs
// update on the owner's finalizers. Loadout sets no finalizer itself.
// +kubebuilder:rbac:groups=loadout.dev,resources=workspaces/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile resolves one Workspace: gather → load extensions → resolve and
// render → apply the ConfigMap → patch status once, only if it changed.
func (r *WorkspaceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ws := &v1alpha1.Workspace{}
	if err := r.Get(ctx, req.NamespacedName, ws); err != nil {
		if apierrors.IsNotFound(err) {
			r.writes.Forget(req.NamespacedName)
			forgetWorkspaceMetrics(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if r.ReconcileTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.ReconcileTimeout)
		defer cancel()
	}
	if !ws.DeletionTimestamp.IsZero() {
		// The ConfigMap goes with the Workspace through its owner reference;
		// until it is gone, it denies everything.
		return ctrl.Result{}, r.publishDenyAll(ctx, ws)
	}
	before := ws.DeepCopy()
	result, applied, err := r.reconcile(ctx, ws)
	summarize(ws, err)
	observeReconcile(ws, err, r.PerWorkspaceMetrics)
	if err == nil && applied && result.IsZero() && !equality.Semantic.DeepEqual(before.Status, ws.Status) {
		// The new context is out; its status can wait behind the contexts of
		// other Workspaces that a change also affects. Requeued with a lower
		// priority, this Workspace comes back once they are written, finds
		// its ConfigMap current (no write) and patches the status then: one
		// ConfigMap write and one status patch, but the API server's time
		// goes to the contexts agents read first (docs/benchmarks.md).
		return ctrl.Result{RequeueAfter: time.Millisecond, Priority: ptr.To(statusPriority)}, nil
	}
	if patchErr := r.patchStatus(ctx, before, ws); patchErr != nil {
		err = errors.Join(err, patchErr)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return result, nil
}

// reconcile sets ws.Status from the current inputs and publishes the context
// when the pipeline says it may. A transient failure is returned as an error;
// an invalid input is a condition, and the last good ConfigMap stays.
func (r *WorkspaceReconciler) reconcile(ctx context.Context, ws *v1alpha1.Workspace) (result ctrl.Result, applied bool, err error) {
	start := time.Now()
	objs := cachedObjects{cache: r.Client, reader: r.APIReader}
	platform, err := workspace.PlatformPolicyOf(ctx, ws.Namespace, objs, r.Policy, r.Loader)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	res, err := workspace.Resolve(ctx, ws, objs, r.Policy, platform, r.Loader)
	resolutionDuration.Observe(time.Since(start).Seconds())
	if err != nil {
		return ctrl.Result{}, false, err
	}
	setResolvedStatus(ws, res)
	if res.RetrySoon {
		result = ctrl.Result{RequeueAfter: importRetryInterval}
	}
	var tenant workspace.Tenant
	var last *workspace.LastGood
	if workspace.NeedsLastGood(res, platform) {
		if tenant, last, err = r.lastGood(ctx, ws); err != nil {
			return result, false, err
		}
	}
	out, err := workspace.Decide(ws, res, platform, tenant, last)
	if err != nil || out.Kind == workspace.OutcomeKeepLastGood {
		return result, false, err // a broken platform policy is the platform's to fix: the last good context stays
	}
	published, held := out.Result, out.Held
	if held != nil {
		held.Message = truncate(held.Message, maxHeldMessage)
	}
	owner, err := r.olderClaimant(ctx, ws)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if owner != nil {
		keepLastGood(ws, vocab.ReasonConfigMapNameConflict, conflictMessage(ws, owner))
		return ctrl.Result{}, false, nil
	}
	w, err := r.publishConfigMap(ctx, ws, published, out.ConfigMap)
	if err != nil {
		var notOwned *notOwnedError
		if errors.As(err, &notOwned) {
			keepLastGood(ws, vocab.ReasonNotOwned, err.Error())
			return ctrl.Result{}, false, nil
		}
		setCondition(ws, vocab.ConditionContextPublished, false, vocab.ReasonPublishFailed, err.Error())
		return ctrl.Result{}, false, err
	}
	if held != nil {
		setHeldStatus(ws, published, held)
	} else {
		setPublishedStatus(ws, res)
	}
	if w.overlapped {
		// Someone else wrote the ConfigMap while our write was in flight;
		// look again rather than trust that ours came last.
		return ctrl.Result{RequeueAfter: overlapRecheck}, w.applied, nil
	}
	return result, w.applied, nil
}

// statusPriority is the work-queue priority of a status patch deferred
// behind context writes: below events (0), above the initial list (-100).
const statusPriority = -1

// patchStatus patches the status once, and only when it changed.
func (r *WorkspaceReconciler) patchStatus(ctx context.Context, before, ws *v1alpha1.Workspace) error {
	if equality.Semantic.DeepEqual(before.Status, ws.Status) {
		return nil
	}
	digest := statusDigest(&ws.Status)
	if r.writes.StatusWritten(keyOf(ws), ws.UID, digest) {
		return nil
	}
	if err := r.Status().Patch(ctx, ws, client.MergeFrom(before)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patching status of Workspace %s/%s: %w", ws.Namespace, ws.Name, err)
	}
	r.writes.RecordStatus(keyOf(ws), ws.UID, digest)
	r.recordTransitions(before, ws)
	return nil
}

// statusDigest hashes a status ignoring condition transition times, which
// differ when the status was computed from a stale cached object.
func statusDigest(s *v1alpha1.WorkspaceStatus) [sha256.Size]byte {
	s = s.DeepCopy()
	for i := range s.Conditions {
		s.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	b, _ := json.Marshal(s) // a struct of plain fields always marshals
	return sha256.Sum256(b)
}

// SetupWithManager registers the reconciler, its indexes and its watches.
func (r *WorkspaceReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if r.Loader == nil {
		r.Loader = workspace.HostLoader{}
	}
	if err := r.setupIndexes(ctx, mgr); err != nil {
		return err
	}
	// Spec and label changes of inputs matter; their status writes do not.
	inputChanged := builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Workspace{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}, builder.OnlyMetadata, builder.WithPredicates(r.ignoreOurOwnApplies())).
		Watches(&v1alpha1.Skill{}, handler.EnqueueRequestsFromMapFunc(r.workspacesForResource), inputChanged).
		Watches(&v1alpha1.Template{}, handler.EnqueueRequestsFromMapFunc(r.workspacesForResource), inputChanged).
		Watches(&v1alpha1.Extension{}, handler.EnqueueRequestsFromMapFunc(r.workspacesForResource),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, mcpToolsChanged()))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.workspacesForNamespace),
			builder.OnlyMetadata, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.workspacesForConfigMap), builder.OnlyMetadata).
		Watches(&v1alpha1.Workspace{}, handler.EnqueueRequestsFromMapFunc(r.workspacesForDeletedWorkspace),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc:  func(event.CreateEvent) bool { return false },
				UpdateFunc:  func(event.UpdateEvent) bool { return false },
				GenericFunc: func(event.GenericEvent) bool { return false },
			})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, r.MaxConcurrentReconciles),
			NewQueue: newFairQueue(mgr.GetClient(), max(1, r.MaxConcurrentReconciles))}).
		Named("workspace").
		Complete(r)
}

// ignoreOurOwnApplies drops the create and update events of a ConfigMap that
// our own write produced: reconciling on our own write would double the work
// of every change for nothing. Hand edits pass (a resourceVersion we did not
// write) and so does every deletion, so a deleted ConfigMap is restored.
func (r *WorkspaceReconciler) ignoreOurOwnApplies() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return !r.ourWrite(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool { return !r.ourWrite(e.ObjectNew) },
	}
}

// ourWrite reports whether an event of obj, a ConfigMap a Workspace controls,
// shows our own write (see ownwrites.Log.Ours).
func (r *WorkspaceReconciler) ourWrite(obj client.Object) bool {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != v1alpha1.WorkspaceKind {
		return false
	}
	return r.writes.Ours(types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}, obj)
}

func keyOf(ws *v1alpha1.Workspace) types.NamespacedName {
	return types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name}
}
