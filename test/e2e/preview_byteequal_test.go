package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/controllers"
	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testmanager"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// TestPreview_ByteEqualToThePublishedConfigMapHashIncluded publishes
// config/samples through the controller, signing as the shipped manager
// does, and diffs every ConfigMap that `loadout preview -f config/samples`
// prints against the live one: the same data bytes under every key the
// preview prints, the same hash annotation, the same label. The cluster's
// one extra key is the signature, which verifies over the preview's hash
// with the manager's public key. A GitOps user can therefore diff preview
// output against the cluster.
func TestPreview_ByteEqualToThePublishedConfigMapHashIncluded(t *testing.T) {
	ctx, env := startPreviewCluster(t)
	env.applySamples(t, ctx)
	env.checkPreviewMatchesCluster(t, ctx, env.preview(t, ctx, "-f", filepath.Join(testenv.RepoRoot(), "config", "samples")))
}

// TestPreview_LastGoodHeldAndPolicyOnlyByteEqualToTheCluster: when a
// tenant's own input is invalid, the cluster publishes its last good content
// under the platform's current policy (held), or, for a Workspace with no
// good context yet, the platform's policy alone (policy only). `loadout
// preview --last-good` given the ConfigMaps the cluster had published
// prints both, byte for byte, from the same workspace.Decide.
func TestPreview_LastGoodHeldAndPolicyOnlyByteEqualToTheCluster(t *testing.T) {
	ctx, env := startPreviewCluster(t)
	samples := env.applySamples(t, ctx)
	// The last good context of team-a/dev, as `kubectl get -o yaml` saves it.
	good := waitPublished(t, ctx, env.client, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "dev-context",
		Labels: map[string]string{vocab.WorkspaceLabel: "dev"}}}, "")
	good.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	lastGood := filepath.Join(t.TempDir(), "last-good.yaml")
	writeYAML(t, lastGood, good)

	// The tenant breaks dev (it activates a skill that does not exist) and
	// creates fresh, broken from the start.
	var broken []manifests.Manifest
	var guard manifests.Manifest
	for _, m := range samples {
		if m.Object.GetKind() == "Extension" && m.Object.GetName() == "platform-guard" {
			guard = m
		}
		if m.Object.GetKind() == "Workspace" && m.Object.GetName() == "dev" {
			m.Object = m.Object.DeepCopy()
			if err := unstructured.SetNestedSlice(m.Object.Object, []any{map[string]any{"skill": "no-such-skill"}}, "spec", "activate"); err != nil {
				t.Fatal(err)
			}
			fresh := m.Object.DeepCopy()
			fresh.SetName("fresh")
			broken = append(broken, m, manifests.Manifest{File: "fresh.yaml", Object: fresh})
			continue
		}
		broken = append(broken, m)
	}
	if err := manifests.Apply(ctx, env.client, broken, client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]v1alpha1.HeldContentMode{"dev": v1alpha1.HeldContentContent, "fresh": v1alpha1.HeldContentPolicyOnly} {
		waitHeld(t, ctx, env.client, types.NamespacedName{Namespace: "team-a", Name: name}, mode)
	}
	// Then the platform changes its policy (a denied tool more): it reaches
	// the held content and the policy-only context at once.
	guard.Object = guard.Object.DeepCopy()
	if err := unstructured.SetNestedStringSlice(guard.Object.Object, []string{"telnet"}, "spec", "deniedTools"); err != nil {
		t.Fatal(err)
	}
	if err := manifests.Apply(ctx, env.client, []manifests.Manifest{guard}, client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	broken = slices.DeleteFunc(broken, func(m manifests.Manifest) bool { return m.Object.GetName() == guard.Object.GetName() })
	broken = append(broken, guard)
	previewed := env.preview(t, ctx, "-f", writeManifests(t, broken), "--last-good", lastGood)
	if len(previewed) != 2 {
		t.Fatalf("preview printed %d ConfigMaps, want dev's held and fresh's policy-only contexts", len(previewed))
	}
	env.checkPreviewMatchesCluster(t, ctx, previewed)
	if from := previewed[0].Annotations[workspace.ContentFromAnnotation]; previewed[0].Name != "dev-context" || from != good.Annotations[vocab.ContextHashAnnotation] {
		t.Errorf("preview's held context %s says its content is from %q, want the last good %s", previewed[0].Name, from, good.Annotations[vocab.ContextHashAnnotation])
	}

	// Without --last-good, preview cannot know what the cluster held: it
	// fails naming the Workspace and the failure.
	cmd := exec.CommandContext(ctx, env.loadout, "preview", "-f", writeManifests(t, broken))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "team-a/dev") || !strings.Contains(string(out), "no-such-skill") {
		t.Errorf("preview without --last-good: %v\n%s", err, out)
	}
}

// previewCluster is the test control plane with the controllers in
// process, configured as the manager's defaults (platform namespace
// loadout-system, restricted default trust), signing as the shipped
// manager does, and the loadout CLI built.
type previewCluster struct {
	client   client.Client
	loadout  string
	signer   *contextsig.Signer
	verifier *contextsig.Verifier
}

func startPreviewCluster(t *testing.T) (context.Context, *previewCluster) {
	t.Helper()
	loadout := testenv.GoBuild(t, t.TempDir(), "./cmd/loadout")
	cfg := testenv.StartFor(t)
	c, err := client.New(cfg, client.Options{Scheme: kubescheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	signer, err := contextsig.NewSigner([]ed25519.PrivateKey{testenv.SigningKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := contextsig.ParseTrustAnchor(signer.TrustAnchor())
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := testmanager.Start(ctx, cfg, testmanager.Options{Controllers: controllers.Options{
		Policy: workspace.Policy{PlatformNamespaces: []string{"loadout-system"}, DefaultTrust: vocab.TrustRestricted},
		Signer: signer,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := mgr.Stop(); err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return ctx, &previewCluster{client: c, loadout: loadout, signer: signer, verifier: verifier}
}

// applySamples applies config/samples (the Deployment aside: no kubelet
// runs its pods) and returns what it applied.
func (e *previewCluster) applySamples(t *testing.T, ctx context.Context) []manifests.Manifest {
	t.Helper()
	samples, err := manifests.Read(filepath.Join(testenv.RepoRoot(), "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	samples = slices.DeleteFunc(samples, func(m manifests.Manifest) bool { return m.Object.GetKind() == "Deployment" })
	if err := manifests.Apply(ctx, e.client, samples); err != nil {
		t.Fatal(err)
	}
	return samples
}

// preview runs `loadout preview` with args and decodes what it printed.
func (e *previewCluster) preview(t *testing.T, ctx context.Context, args ...string) []corev1.ConfigMap {
	t.Helper()
	var stdout, stderr bytes.Buffer
	preview := exec.CommandContext(ctx, e.loadout, append([]string{"preview"}, args...)...)
	preview.Stdout, preview.Stderr = &stdout, &stderr
	if err := preview.Run(); err != nil {
		t.Fatalf("loadout preview: %v\n%s", err, stderr.String())
	}
	previewed := decodeConfigMaps(t, stdout.Bytes())
	if len(previewed) == 0 {
		t.Fatal("preview printed no ConfigMap")
	}
	return previewed
}

// checkPreviewMatchesCluster diffs every ConfigMap preview printed against
// the live one: the same data bytes under every key the preview prints, the
// same annotations, the same label. The cluster's one extra key is the
// signature, which verifies over the preview's hash with the manager's
// public key. A GitOps user can therefore diff preview output against the
// cluster.
func (e *previewCluster) checkPreviewMatchesCluster(t *testing.T, ctx context.Context, previewed []corev1.ConfigMap) {
	t.Helper()
	for _, want := range previewed {
		live := waitPublished(t, ctx, e.client, want, want.Annotations[vocab.ContextHashAnnotation])
		if _, ok := want.Data[contract.KeySignature]; ok {
			t.Fatalf("%s/%s: preview printed a signature; it holds no key", want.Namespace, want.Name)
		}
		// The signature is the cluster's one extra key: it signs the hash
		// the preview computed, for this Workspace and ConfigMap.
		sig := live.Data[contract.KeySignature]
		if err := e.verifier.Verify([]byte(sig), want.Annotations[vocab.ContextHashAnnotation],
			contextsig.Subject{Namespace: want.Namespace, Name: want.Labels[vocab.WorkspaceLabel], ConfigMap: want.Name}); err != nil {
			t.Errorf("%s/%s: the cluster's signature does not verify over the preview's hash: %v", want.Namespace, want.Name, err)
		}
		live.Data = maps.Clone(live.Data)
		delete(live.Data, contract.KeySignature)
		// And the annotation naming the keys that signed it.
		if got, want := live.Annotations[vocab.ContextSignersAnnotation], strings.Join(e.signer.KeyIDs(), ","); got != want {
			t.Errorf("%s/%s: %s = %q, want %q", live.Namespace, live.Name, vocab.ContextSignersAnnotation, got, want)
		}
		live.Annotations = maps.Clone(live.Annotations)
		delete(live.Annotations, vocab.ContextSignersAnnotation)
		if !maps.Equal(live.Data, want.Data) {
			for k := range want.Data {
				if live.Data[k] != want.Data[k] {
					t.Errorf("%s/%s: data[%s] differs between preview and cluster:\npreview:\n%s\ncluster:\n%s", want.Namespace, want.Name, k, want.Data[k], live.Data[k])
				}
			}
			t.Errorf("%s/%s: keys %v in preview, %v in the cluster", want.Namespace, want.Name, slices.Sorted(maps.Keys(want.Data)), slices.Sorted(maps.Keys(live.Data)))
		}
		if !maps.Equal(live.Labels, want.Labels) || !maps.Equal(live.Annotations, want.Annotations) {
			t.Errorf("%s/%s: labels %v annotations %v in the cluster, preview printed %v and %v",
				want.Namespace, want.Name, live.Labels, live.Annotations, want.Labels, want.Annotations)
		}
	}
}

// writeManifests writes manifests as one multi-document YAML file in a new
// directory, which it returns: what preview reads with -f.
func writeManifests(t *testing.T, ms []manifests.Manifest) string {
	t.Helper()
	dir := t.TempDir()
	var docs [][]byte
	for _, m := range ms {
		b, err := yaml.Marshal(m.Object.Object)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests.yaml"), bytes.Join(docs, []byte("---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeYAML(t *testing.T, path string, obj any) {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitHeld waits until Workspace key reports a held context of mode.
func waitHeld(t *testing.T, ctx context.Context, c client.Client, key types.NamespacedName, mode v1alpha1.HeldContentMode) {
	t.Helper()
	var last string
	for ctx.Err() == nil {
		ws := &v1alpha1.Workspace{}
		if err := c.Get(ctx, key, ws); err == nil && ws.Status.HeldContent != nil && ws.Status.HeldContent.Mode == mode && ws.Status.Context != nil {
			return
		} else if err == nil {
			last = fmt.Sprintf("%+v", ws.Status.HeldContent)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("Workspace %s never reported a held context of mode %s (last: %s)", key, mode, last)
}

// decodeConfigMaps reads the YAML documents preview printed.
func decodeConfigMaps(t *testing.T, out []byte) []corev1.ConfigMap {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	var cms []corev1.ConfigMap
	for {
		var cm corev1.ConfigMap
		if err := dec.Decode(&cm); err != nil {
			break
		}
		cms = append(cms, cm)
	}
	return cms
}

// waitPublished waits until the cluster's ConfigMap of want's name holds the
// hash its Workspace reports as published, wantHash if given, and returns it.
func waitPublished(t *testing.T, ctx context.Context, c client.Client, want corev1.ConfigMap, wantHash string) *corev1.ConfigMap {
	t.Helper()
	// A first pass may publish before the cache holds every input, so wait
	// (bounded) for the context the controller settles on; if it never
	// reaches preview's hash, return what it settled on so the caller
	// reports the differing keys.
	wsName := want.Labels[vocab.WorkspaceLabel]
	deadline := time.Now().Add(30 * time.Second)
	var last error
	var settled *corev1.ConfigMap
	for ctx.Err() == nil && time.Now().Before(deadline) {
		ws := &v1alpha1.Workspace{}
		cm := &corev1.ConfigMap{}
		switch err := c.Get(ctx, types.NamespacedName{Namespace: want.Namespace, Name: wsName}, ws); {
		case err != nil:
			last = err
		case ws.Status.Context == nil:
			last = fmt.Errorf("Workspace %s/%s has published nothing yet", ws.Namespace, ws.Name)
		default:
			err := c.Get(ctx, types.NamespacedName{Namespace: want.Namespace, Name: want.Name}, cm)
			if err == nil && cm.Annotations[vocab.ContextHashAnnotation] == ws.Status.Context.Hash {
				if ws.Status.Context.Hash == wantHash || wantHash == "" {
					return cm
				}
				settled = cm
			}
			last = fmt.Errorf("ConfigMap %s/%s: %v (status hash %s, preview hash %s)", want.Namespace, want.Name, err, ws.Status.Context.Hash, wantHash)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if settled != nil {
		return settled
	}
	t.Fatalf("waiting for the published context: %v", last)
	return nil
}
