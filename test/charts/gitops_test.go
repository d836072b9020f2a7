package charts

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

const gitopsSection = "## Installing Loadout with Argo CD or Flux"

// gitopsExamples decodes the YAML blocks of docs/gitops.md's installation
// section.
func gitopsExamples(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "gitops.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, gitopsSection)
	if start < 0 {
		t.Fatalf("docs/gitops.md has no section %q", gitopsSection)
	}
	section := text[start+len(gitopsSection):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var objs []*unstructured.Unstructured
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1) {
		o, err := manifests.Decode([]byte(m[1]))
		if err != nil {
			t.Fatalf("docs/gitops.md: a YAML block does not parse: %v\n%s", err, m[1])
		}
		objs = append(objs, o...)
	}
	if len(objs) == 0 {
		t.Fatal("docs/gitops.md: the installation section has no YAML")
	}
	return objs
}

// renderChartFromDocs renders chart path (as the docs name it) into
// namespace with values, and checks the chart exists in this repository.
func renderChartFromDocs(t *testing.T, who, path, namespace string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	path = strings.TrimPrefix(path, "./")
	if _, err := os.Stat(filepath.Join(testenv.RepoRoot(), path, "Chart.yaml")); err != nil {
		t.Fatalf("%s: chart path %q is not a chart of this repository: %v", who, path, err)
	}
	// Argo CD and Flux render for the cluster's version; plain helm would
	// assume v1.20, below the loadout chart's kubeVersion.
	args := []string{"template", filepath.Base(path), path, "--kube-version", kubeVersion}
	if namespace != "" {
		args = append(args, "--namespace", namespace)
	}
	if values != nil {
		b, err := yaml.Marshal(values)
		if err != nil {
			t.Fatal(err)
		}
		f := testenv.TempFile(t, "values.yaml", b, 0o600)
		args = append(args, "--values", f)
	}
	return decodeRendered(t, who+": helm template "+path, testenv.Helm(t, args...))
}

// checkChartContents: the CRDs chart holds the CRDs of config/crd/bases and
// nothing else; the manager chart holds no CRD.
func checkChartContents(t *testing.T, who, path string, objs []*unstructured.Unstructured) {
	t.Helper()
	crds := 0
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds++
		}
	}
	switch strings.TrimPrefix(path, "./") {
	case "charts/loadout-crds":
		bases, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if crds != len(bases) || len(objs) != len(bases) {
			t.Errorf("%s renders %d objects, %d CRDs; want the %d CRDs of config/crd/bases only", who, len(objs), crds, len(bases))
		}
	case "charts/loadout":
		if crds != 0 || find(objs, "Deployment", "loadout-manager") == nil {
			t.Errorf("%s renders %d CRDs and the manager Deployment: %v; want no CRD and the manager", who, crds, find(objs, "Deployment", "loadout-manager") != nil)
		}
	}
}

func TestGitopsDocs_ArgoCDSyncWavesPutCRDsFirstAndTheChartsRender(t *testing.T) {
	wave := map[string]int{} // chart path or "objects" → wave
	for _, app := range gitopsExamples(t) {
		if app.GetKind() != "Application" {
			continue
		}
		w, err := strconv.Atoi(app.GetAnnotations()["argocd.argoproj.io/sync-wave"])
		if err != nil {
			t.Errorf("Application %s: sync-wave annotation: %v", app.GetName(), err)
		}
		path, _, _ := unstructured.NestedString(app.Object, "spec", "source", "path")
		if !strings.HasPrefix(path, "charts/") {
			wave["objects"] = w
			continue
		}
		wave[path] = w
		ns, _, _ := unstructured.NestedString(app.Object, "spec", "destination", "namespace")
		values, _, _ := unstructured.NestedMap(app.Object, "spec", "source", "helm", "valuesObject")
		who := "docs/gitops.md Application " + app.GetName()
		checkChartContents(t, who, path, renderChartFromDocs(t, who, path, ns, values))
		opts, _, _ := unstructured.NestedStringSlice(app.Object, "spec", "syncPolicy", "syncOptions")
		if !slices.Contains(opts, "ServerSideApply=true") {
			t.Errorf("%s: syncOptions %v lack ServerSideApply=true", who, opts)
		}
	}
	crds, okC := wave["charts/loadout-crds"]
	mgr, okM := wave["charts/loadout"]
	objects, okO := wave["objects"]
	if !okC || !okM || !okO {
		t.Fatalf("docs/gitops.md: want Applications for charts/loadout-crds, charts/loadout and the objects; waves %v", wave)
	}
	if !(crds < mgr && mgr < objects) {
		t.Errorf("docs/gitops.md: sync waves crds=%d loadout=%d objects=%d; want the CRDs first, then Loadout, then the objects", crds, mgr, objects)
	}
}

func TestGitopsDocs_FluxDependsOnPutsCRDsFirstAndTheChartsRender(t *testing.T) {
	objs := gitopsExamples(t)
	releaseFor := map[string]*unstructured.Unstructured{} // chart path → HelmRelease
	sources := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() == "GitRepository" {
			sources[o.GetName()] = true
		}
	}
	for _, hr := range objs {
		if hr.GetKind() != "HelmRelease" {
			continue
		}
		who := "docs/gitops.md HelmRelease " + hr.GetName()
		path, _, _ := unstructured.NestedString(hr.Object, "spec", "chart", "spec", "chart")
		src, _, _ := unstructured.NestedString(hr.Object, "spec", "chart", "spec", "sourceRef", "name")
		if !sources[src] {
			t.Errorf("%s: sourceRef %q is no GitRepository of the example", who, src)
		}
		ns, _, _ := unstructured.NestedString(hr.Object, "spec", "targetNamespace")
		values, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
		checkChartContents(t, who, path, renderChartFromDocs(t, who, path, ns, values))
		releaseFor[strings.TrimPrefix(path, "./")] = hr
	}
	crds, mgr := releaseFor["charts/loadout-crds"], releaseFor["charts/loadout"]
	if crds == nil || mgr == nil {
		t.Fatalf("docs/gitops.md: want HelmReleases for charts/loadout-crds and charts/loadout")
	}
	deps, _, _ := unstructured.NestedSlice(mgr.Object, "spec", "dependsOn")
	dependsOnCRDs := slices.ContainsFunc(deps, func(d any) bool { return d.(map[string]any)["name"] == crds.GetName() })
	if !dependsOnCRDs {
		t.Errorf("docs/gitops.md: HelmRelease %s dependsOn %v; want %s (the CRDs first)", mgr.GetName(), deps, crds.GetName())
	}
	if k := find(objs, "Kustomization", "loadout-objects"); k == nil {
		t.Error("docs/gitops.md: no Kustomization loadout-objects for the Loadout objects")
	} else if deps, _, _ := unstructured.NestedSlice(k.Object, "spec", "dependsOn"); len(deps) == 0 {
		t.Error("docs/gitops.md: Kustomization loadout-objects has no dependsOn: its Workspaces could sync before the CRDs")
	}
}
