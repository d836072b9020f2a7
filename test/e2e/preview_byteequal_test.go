package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	loadout := testenv.GoBuild(t, t.TempDir(), "./cmd/loadout")
	cfg := testenv.StartFor(t)
	c, err := client.New(cfg, client.Options{Scheme: kubescheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	signer, err := contextsig.NewSigner([]ed25519.PrivateKey{testenv.SigningKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := contextsig.ParseTrustAnchor(signer.TrustAnchor())
	if err != nil {
		t.Fatal(err)
	}
	// The controllers in process, configured as the manager's defaults
	// (platform namespace loadout-system, restricted default trust).
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

	samplesDir := filepath.Join(testenv.RepoRoot(), "config", "samples")
	samples, err := manifests.Read(samplesDir)
	if err != nil {
		t.Fatal(err)
	}
	samples = slices.DeleteFunc(samples, func(m manifests.Manifest) bool { return m.Object.GetKind() == "Deployment" })
	if err := manifests.Apply(ctx, c, samples); err != nil {
		t.Fatal(err)
	}

	var stdout, stderr bytes.Buffer
	preview := exec.CommandContext(ctx, loadout, "preview", "-f", samplesDir)
	preview.Stdout, preview.Stderr = &stdout, &stderr
	if err := preview.Run(); err != nil {
		t.Fatalf("loadout preview: %v\n%s", err, stderr.String())
	}
	previewed := decodeConfigMaps(t, stdout.Bytes())
	if len(previewed) == 0 {
		t.Fatal("preview printed no ConfigMap")
	}
	for _, want := range previewed {
		live := waitPublished(t, ctx, c, want)
		if _, ok := want.Data[contract.KeySignature]; ok {
			t.Fatalf("%s/%s: preview printed a signature; it holds no key", want.Namespace, want.Name)
		}
		// The signature is the cluster's one extra key: it signs the hash
		// the preview computed, for this Workspace and ConfigMap.
		sig := live.Data[contract.KeySignature]
		if err := verifier.Verify([]byte(sig), want.Annotations[vocab.ContextHashAnnotation],
			contextsig.Subject{Namespace: want.Namespace, Name: want.Labels[vocab.WorkspaceLabel], ConfigMap: want.Name}); err != nil {
			t.Errorf("%s/%s: the cluster's signature does not verify over the preview's hash: %v", want.Namespace, want.Name, err)
		}
		live.Data = maps.Clone(live.Data)
		delete(live.Data, contract.KeySignature)
		// And the annotation naming the keys that signed it.
		if got, want := live.Annotations[vocab.ContextSignersAnnotation], strings.Join(signer.KeyIDs(), ","); got != want {
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
// hash its Workspace reports as published, and returns it.
func waitPublished(t *testing.T, ctx context.Context, c client.Client, want corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	// A first pass may publish before the cache holds every input, so wait
	// (bounded) for the context the controller settles on; if it never
	// reaches preview's hash, return what it settled on so the caller
	// reports the differing keys.
	wsName := want.Labels[vocab.WorkspaceLabel]
	wantHash := want.Annotations[vocab.ContextHashAnnotation]
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
				if ws.Status.Context.Hash == wantHash {
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
