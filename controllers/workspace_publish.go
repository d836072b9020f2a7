package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// notOwnedError reports a ConfigMap of the output name that this Workspace
// does not control. It is never overwritten.
type notOwnedError struct{ namespace, name, owner string }

func (e *notOwnedError) Error() string {
	return fmt.Sprintf("ConfigMap %s/%s exists and is not controlled by this Workspace (%s); it is left untouched: delete it or set spec.output.configMapName", e.namespace, e.name, e.owner)
}

// publish writes the context ConfigMap unless the one in the cluster already
// holds this hash and is exactly what our last write left (its
// resourceVersion). Steady state therefore makes no request at all. It
// reports overlapped when someone else wrote the ConfigMap while our write
// was in flight; the caller then looks again.
//
// A ConfigMap the cache does not hold is created, never patched: a write
// would merge into a same-named ConfigMap that the cache has not seen yet
// and take it over, and a create fails instead. Later writes are JSON merge
// patches of the keys, labels and annotations a server-side apply of the
// same shape would own (contextPatch), with the UID of the ConfigMap they
// expect as a precondition, so a cached ConfigMap that was replaced by a
// foreign one meanwhile is not taken over either. A merge patch, not an
// apply: the API server spends less CPU on it (no YAML body, no structured
// merge; 8% less per write measured, 12% less on our side), and with a
// fleet's contexts written at once that CPU is what propagation waits for
// (docs/benchmarks.md, "With the brakes off").
func (r *WorkspaceReconciler) publish(ctx context.Context, ws *v1alpha1.Workspace, res *resources.Result) (w written, err error) {
	return r.publishConfigMap(ctx, ws, res, workspace.ContextConfigMap(ws, res))
}

// publishConfigMap is publish of the ConfigMap an Outcome carries (a held
// context's adds its ContentFromAnnotation). Its annotations change only
// with the context's hash, so the write decision stays the hash's.
func (r *WorkspaceReconciler) publishConfigMap(ctx context.Context, ws *v1alpha1.Workspace, res *resources.Result, cm *corev1ac.ConfigMapApplyConfiguration) (w written, err error) {
	key := types.NamespacedName{Namespace: ws.Namespace, Name: ws.ConfigMapName()}
	signers := r.sign(cm, ws, res)
	existing := configMapMetadata()
	err = r.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		w.overlapped, err = r.write(ws, res, "", func() (string, error) { return r.create(ctx, cm) })
		if !apierrors.IsAlreadyExists(err) {
			return written{overlapped: w.overlapped}, wrapErr(err, "creating ConfigMap %s", key)
		}
		err = r.APIReader.Get(ctx, key, existing) // it exists: whose is it?
	}
	if err != nil {
		return written{}, fmt.Errorf("reading ConfigMap %s: %w", key, err)
	}
	if err := checkControlled(existing, ws); err != nil {
		took, terr := r.takeOverFromYounger(ctx, ws, existing)
		if terr != nil {
			return written{}, terr
		}
		if !took {
			return written{}, err
		}
	}
	if r.writes.Current(keyOf(ws), res.Hash, existing) && existing.GetAnnotations()[vocab.ContextSignersAnnotation] == signers {
		return written{}, nil
	}
	if adoptable(existing, cm, res.Hash, signers) {
		r.writes.Adopt(keyOf(ws), res.Hash, existing)
		contextAdoptions.Inc()
		return written{}, nil
	}
	patch, err := contextPatch(existing, cm)
	if err != nil {
		return written{}, fmt.Errorf("patching ConfigMap %s: %w", key, err)
	}
	w.overlapped, err = r.write(ws, res, existing.ResourceVersion, func() (string, error) {
		target := configMapMetadata()
		target.Namespace, target.Name = key.Namespace, key.Name
		err := r.Patch(ctx, target, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldOwner))
		return target.ResourceVersion, err
	})
	if err != nil {
		// The UID precondition fails (metadata.uid is immutable) when the
		// ConfigMap was replaced since the cache saw it. Whose is it now?
		if gerr := r.APIReader.Get(ctx, key, existing); gerr == nil {
			if cerr := checkControlled(existing, ws); cerr != nil {
				return written{}, cerr
			}
		}
	}
	return written{applied: err == nil, overlapped: w.overlapped}, wrapErr(err, "patching ConfigMap %s", key)
}

// sign adds the context's signature (contract.KeySignature) and the ids of
// the keys that signed it to cm, and returns those ids. Without a Signer
// (tests that do not exercise signing) the context is published unsigned,
// which hostd refuses unless told to accept unsigned contexts.
func (r *WorkspaceReconciler) sign(cm *corev1ac.ConfigMapApplyConfiguration, ws *v1alpha1.Workspace, res *resources.Result) string {
	if r.Signer == nil {
		return ""
	}
	doc := r.Signer.Sign(res.Hash, signedFor(ws))
	signers := strings.Join(r.Signer.KeyIDs(), ",")
	cm.WithData(map[string]string{contract.KeySignature: string(doc)}).
		WithAnnotations(map[string]string{vocab.ContextSignersAnnotation: signers})
	return signers
}

// signedFor is what a Workspace's contexts are signed for.
func signedFor(ws *v1alpha1.Workspace) contextsig.Subject {
	return contextsig.Subject{Namespace: ws.Namespace, Name: ws.Name, UID: string(ws.UID), ConfigMap: ws.ConfigMapName()}
}

// written says what a publish did: whether it applied a new context over an
// existing ConfigMap (a create is not counted: it happens once in a
// Workspace's life and its status is patched at once), and whether someone
// else wrote the ConfigMap while our write was in flight.
type written struct {
	applied, overlapped bool
}

// write runs one write of the context ConfigMap through the write log, which
// attributes its watch events (see ownwrites.Log.Write), and counts it.
func (r *WorkspaceReconciler) write(ws *v1alpha1.Workspace, res *resources.Result, replaced string, do func() (resourceVersion string, err error)) (overlapped bool, err error) {
	overlapped, err = r.writes.Write(keyOf(ws), res.Hash, replaced, do)
	if err != nil {
		return false, err
	}
	configMapApplies.Inc()
	publishedBytes.Observe(float64(res.Bytes))
	return overlapped, nil
}

// adoptable reports whether a ConfigMap this Workspace controls, which this
// process has not written (a restart, or a shard's new leader), already is
// what writing cm would leave: it carries hash and the current signing
// keys, only Loadout ever wrote it (every managed-fields entry is
// FieldOwner's, so nobody else changed a value), and Loadout still owns
// every key, label and annotation cm sets (a field someone removed drops out
// of Loadout's set). Such a ConfigMap is adopted without a write; anything
// else is written again. All of it is in the cached metadata: no read.
func adoptable(existing *metav1.PartialObjectMetadata, cm *corev1ac.ConfigMapApplyConfiguration, hash, signers string) bool {
	if existing.GetAnnotations()[vocab.ContextHashAnnotation] != hash || existing.GetAnnotations()[vocab.ContextSignersAnnotation] != signers {
		return false
	}
	if len(existing.ManagedFields) == 0 {
		return false
	}
	for _, f := range existing.ManagedFields {
		if f.Manager != FieldOwner {
			return false
		}
	}
	ours, _, err := ownedKeys(existing)
	if err != nil {
		return false
	}
	for group, want := range desiredKeys(cm) {
		for k := range want {
			if !ours[group][k] {
				return false
			}
		}
	}
	return true
}

// checkControlled returns a *notOwnedError unless ws controls the ConfigMap.
func checkControlled(existing *metav1.PartialObjectMetadata, ws *v1alpha1.Workspace) error {
	if metav1.IsControlledBy(existing, ws) {
		return nil
	}
	owner := "no controller"
	if ref := metav1.GetControllerOf(existing); ref != nil {
		owner = "controlled by " + ref.Kind + " " + ref.Name
		if ref.Kind == v1alpha1.WorkspaceKind && ref.Name == ws.Name && ref.UID != ws.UID {
			// A deleted Workspace of the same name: its ConfigMap goes with
			// it (garbage collection), and that deletion triggers a publish.
			owner = "controlled by an earlier Workspace " + ref.Name + " (uid " + string(ref.UID) + "), deleted or being deleted"
		}
	}
	return &notOwnedError{namespace: existing.Namespace, name: existing.Name, owner: owner}
}

// wrapErr adds context to err, or returns nil.
func wrapErr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// create creates the ConfigMap described by an apply configuration (the
// same JSON) and returns its resourceVersion.
func (r *WorkspaceReconciler) create(ctx context.Context, ac *corev1ac.ConfigMapApplyConfiguration) (string, error) {
	b, err := json.Marshal(ac)
	if err != nil {
		return "", err
	}
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal(b, cm); err != nil {
		return "", err
	}
	if err := r.Create(ctx, cm, client.FieldOwner(FieldOwner)); err != nil {
		return "", err
	}
	return cm.ResourceVersion, nil
}
