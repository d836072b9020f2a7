package controllers

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/resources"
)

// validationReconciler reports whether one kind of input object passed the
// checks that admission cannot make, through a Valid condition. Skill,
// Template and Extension share it; only the check differs.
type validationReconciler[T client.Object] struct {
	client.Client
	kind   string
	newObj func() T
	// check validates obj and may fill kind-specific status (a template's
	// variables); it returns the problems found.
	check func(obj T) []error
	// status returns the object's conditions and observedGeneration fields.
	status func(obj T) (*[]metav1.Condition, *int64)
}

func (v *validationReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := v.newObj()
	if err := v.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := obj.DeepCopyObject().(T)
	conds, observed := v.status(obj)
	setValidStatus(conds, observed, obj.GetGeneration(), v.kind, v.check(obj))
	if equality.Semantic.DeepEqual(before, obj) {
		return ctrl.Result{}, nil
	}
	if err := v.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("patching status of %s %s: %w", v.kind, req.NamespacedName, err)
	}
	return ctrl.Result{}, nil
}

func (v *validationReconciler[T]) setup(mgr ctrl.Manager, name string) error {
	v.Client = mgr.GetClient()
	return ctrl.NewControllerManagedBy(mgr).
		For(v.newObj(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named(name).
		Complete(v)
}

// SetupValidationReconcilers registers the Skill, Template and Extension
// reconcilers.
func SetupValidationReconcilers(mgr ctrl.Manager) error {
	skills := &validationReconciler[*v1alpha1.Skill]{
		kind:   "Skill",
		newObj: func() *v1alpha1.Skill { return &v1alpha1.Skill{} },
		check: func(s *v1alpha1.Skill) []error {
			return resolveAlone(resources.RootFromObjects("object", s.Namespace, []v1alpha1.Skill{*s}, nil))
		},
		status: func(s *v1alpha1.Skill) (*[]metav1.Condition, *int64) {
			return &s.Status.Conditions, &s.Status.ObservedGeneration
		},
	}
	templates := &validationReconciler[*v1alpha1.Template]{
		kind:   "Template",
		newObj: func() *v1alpha1.Template { return &v1alpha1.Template{} },
		check: func(t *v1alpha1.Template) []error {
			t.Status.Variables = resources.Variables(t.Spec.Body)
			return resolveAlone(resources.RootFromObjects("object", t.Namespace, nil, []v1alpha1.Template{*t}))
		},
		status: func(t *v1alpha1.Template) (*[]metav1.Condition, *int64) {
			return &t.Status.Conditions, &t.Status.ObservedGeneration
		},
	}
	extensions := &validationReconciler[*v1alpha1.Extension]{
		kind:   "Extension",
		newObj: func() *v1alpha1.Extension { return &v1alpha1.Extension{} },
		check:  exthost.ValidateObject,
		status: func(e *v1alpha1.Extension) (*[]metav1.Condition, *int64) {
			return &e.Status.Conditions, &e.Status.ObservedGeneration
		},
	}
	return errors.Join(skills.setup(mgr, "skill"), templates.setup(mgr, "template"), extensions.setup(mgr, "extension"))
}

// setValidStatus records the checks of one generation: Valid, Stalled when
// not valid, and the generation as observed.
func setValidStatus(conds *[]metav1.Condition, observed *int64, generation int64, kind string, errs []error) {
	cond := metav1.Condition{Type: v1alpha1.ConditionValid, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonValid,
		Message: kind + " is valid", ObservedGeneration: generation}
	if len(errs) > 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, v1alpha1.ReasonInvalid
		cond.Message = truncate(errors.Join(errs...).Error(), 32768)
	}
	meta.SetStatusCondition(conds, cond)
	setStalled(conds, cond)
	*observed = generation
}

// setStalled mirrors an invalid Valid condition as Stalled, as kstatus reads
// it: nothing progresses until the object changes. A valid object has no
// Stalled condition.
func setStalled(conds *[]metav1.Condition, valid metav1.Condition) {
	if valid.Status == metav1.ConditionTrue {
		meta.RemoveStatusCondition(conds, v1alpha1.ConditionStalled)
		return
	}
	stalled := valid
	stalled.Type = v1alpha1.ConditionStalled
	stalled.Status = metav1.ConditionTrue
	meta.SetStatusCondition(conds, stalled)
}

// resolveAlone validates one object the way a Workspace would, by resolving a
// root that holds only it.
func resolveAlone(root resources.Root) []error {
	if _, err := resources.Resolve([]resources.Root{root}); err != nil {
		return []error{err}
	}
	return nil
}
