package controllers

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// PlatformNamespaceReconciler watches the platform namespaces' trust labels
// so that an installation without platform policy is never silent: a
// platform namespace that exists without a valid loadout.dev/trust label
// gets a Warning Event (reason PlatformNamespaceUnlabelled) and
// loadout_platform_namespace_trusted{namespace} reads 0 until a trust admin
// labels it. Each Workspace says the same in its PlatformPolicy condition.
type PlatformNamespaceReconciler struct {
	Client   client.Reader
	Recorder events.EventRecorder
	Policy   workspace.Policy

	mu     sync.Mutex
	warned map[string]bool // namespaces warned about since they last were labelled
}

// SetupWithManager registers the reconciler. It runs on every replica, not
// only the leader, so that every replica's metric tells the truth.
func (r *PlatformNamespaceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	for _, ns := range r.Policy.PlatformNamespaces {
		// Absent until seen: a platform namespace that does not exist
		// counts for nothing.
		platformNamespaceTrusted.WithLabelValues(ns).Set(0)
	}
	r.warned = map[string]bool{}
	platform := predicate.NewPredicateFuncs(func(o client.Object) bool { return slices.Contains(r.Policy.PlatformNamespaces, o.GetName()) })
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Namespace{}, builder.OnlyMetadata, builder.WithPredicates(platform)).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		Named("platform-namespace").
		Complete(r)
}

// Reconcile checks one platform namespace's trust label.
func (r *PlatformNamespaceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := namespaceMetadata()
	err := r.Client.Get(ctx, client.ObjectKey{Name: req.Name}, ns)
	if apierrors.IsNotFound(err) {
		platformNamespaceTrusted.WithLabelValues(req.Name).Set(0)
		r.setWarned(req.Name, false)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if !r.Policy.UnlabelledPlatform(ns.Name, ns.Labels) {
		platformNamespaceTrusted.WithLabelValues(ns.Name).Set(1)
		r.setWarned(ns.Name, false)
		return ctrl.Result{}, nil
	}
	platformNamespaceTrusted.WithLabelValues(ns.Name).Set(0)
	if r.setWarned(ns.Name, true) {
		return ctrl.Result{}, nil
	}
	msg := fmt.Sprintf("platform namespace %s has no valid %s label, so it counts for nothing: no Workspace gets its platform policy (hooks, denied tools, prompt guides); a trust admin must run: kubectl label namespace %s %s=%s",
		ns.Name, vocab.TrustLabel, ns.Name, vocab.TrustLabel, vocab.TrustTrusted)
	log.FromContext(ctx).Error(nil, "Platform namespace unlabelled: no platform policy applies", "namespace", ns.Name, "label", vocab.TrustLabel)
	if r.Recorder != nil {
		r.Recorder.Eventf(ns, nil, corev1.EventTypeWarning, string(vocab.ReasonPlatformNamespaceUnlabelled), "CheckTrust", "%s", msg)
	}
	return ctrl.Result{}, nil
}

// setWarned records whether ns is warned about and reports whether it was.
func (r *PlatformNamespaceReconciler) setWarned(ns string, warned bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := r.warned[ns]
	r.warned[ns] = warned
	return was
}
