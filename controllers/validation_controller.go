package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/exthost/extobject"
	"github.com/loadout-dev/loadout/internal/outbound"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// validatedObject is an input kind whose status records a check: Skill,
// Template and Extension.
type validatedObject interface {
	client.Object
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
	SetObservedGeneration(int64)
}

// validationReconciler reports whether one kind of input object passed the
// checks that admission cannot make, through a Valid condition. Skill,
// Template and Extension share it; only the check differs.
type validationReconciler[T validatedObject] struct {
	client.Client
	kind   string
	newObj func() T
	// check validates obj and may fill kind-specific status (a template's
	// variables); it returns the problems found, or an error when it could
	// not check (to retry).
	check func(ctx context.Context, obj T) (checked, error)
	// watches adds kind-specific triggers besides the object's own changes.
	watches func(b *builder.Builder) *builder.Builder
	// gone, when set, forgets what the check kept about a deleted object.
	gone func(types.NamespacedName)
	// workers reconcile in parallel; zero means one.
	workers int
}

// checked is the outcome of a check.
type checked struct {
	errs []error
	// scope qualifies a valid outcome: what was not checked, and why.
	scope string
	// trust is the object's namespace's trust level, where the check read it.
	trust vocab.TrustLevel
	// requeueAfter asks for the check again after this long (an MCP
	// server's tools listed again); zero waits for a change.
	requeueAfter time.Duration
}

func (v *validationReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := v.newObj()
	if err := v.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) && v.gone != nil {
			v.gone(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := obj.DeepCopyObject().(T)
	res, err := v.check(ctx, obj)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("checking %s %s: %w", v.kind, req.NamespacedName, err)
	}
	setValidStatus(obj, v.kind, res)
	again := ctrl.Result{RequeueAfter: res.requeueAfter}
	if equality.Semantic.DeepEqual(before, obj) {
		return again, nil
	}
	if err := v.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("patching status of %s %s: %w", v.kind, req.NamespacedName, err)
	}
	return again, nil
}

func (v *validationReconciler[T]) setup(mgr ctrl.Manager, name string, preds []predicate.Predicate) error {
	v.Client = mgr.GetClient()
	b := ctrl.NewControllerManagedBy(mgr).
		For(v.newObj(), builder.WithPredicates(append([]predicate.Predicate{predicate.GenerationChangedPredicate{}}, preds...)...)).
		Named(name).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, v.workers)})
	if v.watches != nil {
		b = v.watches(b)
	}
	return b.Complete(v)
}

// MCPDiscovery configures how Extensions' MCP servers are listed.
type MCPDiscovery struct {
	// Outbound makes the calls; nil means an outbound.Client with a 4 MiB
	// answer cap.
	Outbound outbound.Doer
	// Resync is how often a server is listed again; zero means
	// DefaultMCPResync.
	Resync time.Duration
	// Secrets reads spec.mcpServer.headersFrom Secrets; nil means the
	// manager's API reader (no cache: the manager watches no Secrets).
	Secrets client.Reader
}

// SetupValidationReconcilers registers the Skill, Template and Extension
// reconcilers; policy decides which namespaces' Extensions can load, and the
// Extension reconciler lists their MCP servers' tools (discovery). preds
// filter the objects each reconciles (a shard's own namespaces).
func SetupValidationReconcilers(mgr ctrl.Manager, policy workspace.Policy, discovery MCPDiscovery, preds ...predicate.Predicate) error {
	skills := &validationReconciler[*v1alpha1.Skill]{
		kind:   "Skill",
		newObj: func() *v1alpha1.Skill { return &v1alpha1.Skill{} },
		check: func(_ context.Context, s *v1alpha1.Skill) (checked, error) {
			return checked{errs: resolveAlone(workspace.RootFromObjects("object", s.Namespace, []v1alpha1.Skill{*s}, nil))}, nil
		},
	}
	templates := &validationReconciler[*v1alpha1.Template]{
		kind:   "Template",
		newObj: func() *v1alpha1.Template { return &v1alpha1.Template{} },
		check: func(_ context.Context, t *v1alpha1.Template) (checked, error) {
			t.Status.Variables = resources.Variables(t.Spec.Body)
			return checked{errs: resolveAlone(workspace.RootFromObjects("object", t.Namespace, nil, []v1alpha1.Template{*t}))}, nil
		},
	}
	secrets := discovery.Secrets
	if secrets == nil {
		secrets = mgr.GetAPIReader()
	}
	mcp := newMCPDiscoverer(discovery.Outbound, discovery.Resync, secrets)
	mcp.events = mgr.GetEventRecorder(EventSource)
	extensions := &validationReconciler[*v1alpha1.Extension]{
		kind:   "Extension",
		newObj: func() *v1alpha1.Extension { return &v1alpha1.Extension{} },
		gone:   mcp.forget,
		// A discovery may wait up to mcpclient.MaxDiscoveryTime on a
		// server that hangs: others go on meanwhile.
		workers: 4,
	}
	extensions.check = func(ctx context.Context, e *v1alpha1.Extension) (checked, error) {
		res, err := checkExtension(ctx, extensions.Client, policy, e)
		if err != nil {
			return res, err
		}
		if len(res.errs) > 0 && e.Spec.MCPServer != nil {
			mcp.setCondition(e, metav1.ConditionFalse, vocab.ReasonDiscoveryNotAllowed, "the Extension is not valid (see its Valid condition): its MCP server is not contacted")
			return res, nil
		}
		res.requeueAfter = mcp.discover(ctx, e, policy, res.trust)
		return res, nil
	}
	extensions.watches = func(b *builder.Builder) *builder.Builder {
		return b.Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(extensionsIn(extensions.Client)),
			builder.OnlyMetadata, builder.WithPredicates(trustLabelChanged()))
	}
	return errors.Join(skills.setup(mgr, "skill", preds), templates.setup(mgr, "template", preds), extensions.setup(mgr, "extension", preds))
}

// checkExtension validates an Extension as far as its namespace's trust
// warrants: in full where extensions load, and with CEL parsed but not
// type-checked where they cannot (docs/security.md), so a tenant's crafted
// expression never reaches the type checker. A change of the namespace's
// trust label re-runs it (extensionsIn).
func checkExtension(ctx context.Context, c client.Reader, policy workspace.Policy, e *v1alpha1.Extension) (checked, error) {
	// Metadata only: the labels are all it needs, and the Workspace
	// controller's metadata informer already holds them.
	ns := namespaceMetadata()
	if err := c.Get(ctx, client.ObjectKey{Name: e.Namespace}, ns); client.IgnoreNotFound(err) != nil {
		return checked{}, fmt.Errorf("reading Namespace %s for its trust level: %w", e.Namespace, err)
	}
	trust := policy.TrustOf(e.Namespace, ns.GetLabels())
	var selectorErr []error
	if sel := e.Spec.NamespaceSelector; sel != nil {
		if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			// Imposed policy with a broken selector applies everywhere
			// (workspace.AppliesTo): too wide, never silently nowhere.
			selectorErr = append(selectorErr, fmt.Errorf("spec.namespaceSelector: %w (until it is fixed the extension applies to every namespace)", err))
		}
	}
	if workspace.LoadsExtensions(trust) {
		validate := extobject.ValidateObject
		if slices.Contains(policy.PlatformNamespaces, e.Namespace) {
			validate = extobject.ValidatePlatformObject
		}
		return checked{errs: append(validate(e), selectorErr...), trust: trust, scope: contentRulesScope(policy, e)}, nil
	}
	return checked{
		trust: trust,
		errs:  extobject.ValidateObjectSyntax(e),
		scope: fmt.Sprintf("; CEL hooks were parsed, not type-checked: namespace %s is %s and loads no extensions (they are checked in full once it is trusted)",
			e.Namespace, trust),
	}, nil
}

// extensionsIn maps a Namespace to the Extensions in it.
func extensionsIn(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, ns client.Object) []reconcile.Request {
		var list v1alpha1.ExtensionList
		if err := c.List(ctx, &list, client.InNamespace(ns.GetName())); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing Extensions to re-validate after a trust change", "namespace", ns.GetName())
			return nil
		}
		reqs := make([]reconcile.Request, len(list.Items))
		for i := range list.Items {
			reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
		}
		return reqs
	}
}

// trustLabelChanged passes Namespace updates that change the trust label.
func trustLabelChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetLabels()[vocab.TrustLabel] != e.ObjectNew.GetLabels()[vocab.TrustLabel]
		},
	}
}

// setValidStatus records the checks of one generation: Valid, Stalled when
// not valid, and the generation as observed.
func setValidStatus(obj validatedObject, kind string, res checked) {
	generation := obj.GetGeneration()
	cond := metav1.Condition{Type: string(vocab.ConditionValid), Status: metav1.ConditionTrue, Reason: string(vocab.ReasonValid),
		Message: kind + " is valid" + res.scope, ObservedGeneration: generation}
	if len(res.errs) > 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, string(vocab.ReasonInvalid)
		cond.Message = truncate(errors.Join(res.errs...).Error(), maxConditionMessage)
	}
	conds := obj.GetConditions()
	meta.SetStatusCondition(&conds, cond)
	setStalled(&conds, cond)
	obj.SetConditions(conds)
	obj.SetObservedGeneration(generation)
}

// setStalled mirrors an invalid Valid condition as Stalled, as kstatus reads
// it: nothing progresses until the object changes. A valid object has no
// Stalled condition.
func setStalled(conds *[]metav1.Condition, valid metav1.Condition) {
	if valid.Status == metav1.ConditionTrue {
		meta.RemoveStatusCondition(conds, string(vocab.ConditionStalled))
		return
	}
	stalled := valid
	stalled.Type = string(vocab.ConditionStalled)
	stalled.Status = metav1.ConditionTrue
	meta.SetStatusCondition(conds, stalled)
}

// resolveAlone validates one object the way a Workspace would, by resolving a
// root that holds only it.
func resolveAlone(root resources.Root) []error {
	if _, err := resources.BuildCatalog([]resources.Root{root}); err != nil {
		return []error{err}
	}
	return nil
}

// contentRulesScope says, on the Valid condition, that an Extension's
// content rules are ignored where only an imposed platform extension's
// count.
func contentRulesScope(policy workspace.Policy, e *v1alpha1.Extension) string {
	if len(e.Spec.ContentRules) == 0 || (slices.Contains(policy.PlatformNamespaces, e.Namespace) && !e.Spec.Optional) {
		return ""
	}
	return "; spec.contentRules are ignored: only an imposed Extension of a platform namespace declares content rules"
}
