package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// TestRelease_PushedChartInstallsAndNamesImagesWithSBOMs is `make release`
// against a registry on loopback, then what a user does with it: pull both
// charts back, install them on a test control plane with their defaults,
// and find every image the installed manager names (its own and the hostd
// sidecar's) in the registry at the release's tag, each with its SBOM as a
// referrer. It also checks the CLI binaries against SHA256SUMS and loads
// the image archives (with podman where it is installed).
func TestRelease_PushedChartInstallsAndNamesImagesWithSBOMs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every image and CLI binary; not in -short")
	}
	ctrllog.SetLogger(logr.Discard()) // envtest's progress lines; failures come back as errors
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	helmHome := t.TempDir()
	t.Setenv("HELM_CACHE_HOME", filepath.Join(helmHome, "cache"))
	t.Setenv("HELM_CONFIG_HOME", filepath.Join(helmHome, "config"))
	t.Setenv("HELM_DATA_HOME", filepath.Join(helmHome, "data"))
	r := Release{
		Build: Build{Repo: repo, Version: "v0.9.0-rc.1", Commit: "0123456789abcdef", Date: time.Unix(1700000000, 0),
			Source: "https://github.com/loadout-dev/loadout"},
		Registry: testnet.Registry(t) + "/acme", Insecure: true, Helm: testenv.HelmBinary(t), Dist: t.TempDir(),
	}
	if err := r.Run(t.Context()); err != nil {
		t.Fatal(err)
	}

	// The charts, pulled back as a user pulls them.
	pulled := t.TempDir()
	for _, c := range Charts {
		testenv.Helm(t, "pull", "oci://"+r.Registry+"/charts/"+c, "--version", "0.9.0-rc.1", "--plain-http", "--destination", pulled)
	}
	chart := func(c string) string { return filepath.Join(pulled, c+"-0.9.0-rc.1.tgz") }

	// Installed with their defaults on a test control plane.
	cluster := testenv.StartAdmin(t)
	testenv.Helm(t, "install", "loadout-crds", chart("loadout-crds"), "--kubeconfig", cluster.Kubeconfig)
	// As README.md installs it: the namespace first, which the chart adopts.
	if err := cluster.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "loadout-system"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Helm(t, "install", "loadout", chart("loadout"), "--namespace", "loadout-system", "--take-ownership", "--kubeconfig", cluster.Kubeconfig)
	rendered, err := manifests.Decode(testenv.Helm(t, "get", "manifest", "loadout", "--namespace", "loadout-system", "--kubeconfig", cluster.Kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	images := imagesNamed(t, rendered)
	want := []string{r.ImageRef(Images[0]), r.ImageRef(Images[1])} // the manager's and hostd's
	slices.Sort(want)
	if !slices.Equal(images, want) {
		t.Fatalf("the installed chart names images %v, want %v (the release's tag, its registry)", images, want)
	}
	for _, ref := range images {
		checkImageWithSBOM(t, ref)
	}

	// The CLI for four platforms, as SHA256SUMS lists them; the Linux one runs.
	sums, err := os.ReadFile(filepath.Join(r.Dist, "bin", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	if len(lines) != len(CLIPlatforms) {
		t.Errorf("SHA256SUMS lists %d files, want %d", len(lines), len(CLIPlatforms))
	}
	for _, line := range lines {
		sum, file, _ := strings.Cut(line, "  ")
		data, err := os.ReadFile(filepath.Join(r.Dist, "bin", file))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: SHA256SUMS says %s", file, sum)
		}
	}
	out, err := exec.Command(filepath.Join(r.Dist, "bin", "loadout_v0.9.0-rc.1_linux_amd64"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "v0.9.0-rc.1") {
		t.Errorf("loadout version: %v: %s", err, out)
	}

	checkArchives(t, r)
}

// imagesNamed lists, sorted, the images a rendered chart runs or injects:
// the containers' images and the manager's --hostd-image.
func imagesNamed(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			c := c.(map[string]any)
			out = append(out, c["image"].(string))
			args, _, _ := unstructured.NestedStringSlice(c, "args")
			for _, a := range args {
				if img, ok := strings.CutPrefix(a, "--hostd-image="); ok {
					out = append(out, img)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkImageWithSBOM finds ref in the registry, both platforms, and among
// its index's referrers an SPDX SBOM that names the image's main binary.
func checkImageWithSBOM(t *testing.T, ref string) {
	t.Helper()
	r, idx, digest := pullIndex(t, ref)
	if m, err := idx.IndexManifest(); err != nil || len(m.Manifests) != len(Platforms) {
		t.Errorf("%s: %d platforms, want %d (%v)", ref, len(m.Manifests), len(Platforms), err)
	}
	refs, err := remote.Referrers(r.Context().Digest(digest.String()))
	if err != nil {
		t.Fatalf("%s: referrers: %v", ref, err)
	}
	rm, err := refs.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range rm.Manifests {
		if d.ArtifactType != SBOMArtifactType {
			continue
		}
		art, err := remote.Image(r.Context().Digest(d.Digest.String()))
		if err != nil {
			t.Fatal(err)
		}
		layers, err := art.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("%s: SBOM artifact has %d layers: %v", ref, len(layers), err)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		var doc struct {
			SPDXVersion string `json:"spdxVersion"`
			Name        string `json:"name"`
		}
		if err := json.NewDecoder(rc).Decode(&doc); err != nil || !strings.HasPrefix(doc.SPDXVersion, "SPDX-") {
			t.Errorf("%s: the SBOM referrer is not an SPDX document: %v %+v", ref, err, doc)
		}
		return
	}
	t.Errorf("%s: no referrer of artifact type %s among %+v", ref, SBOMArtifactType, rm.Manifests)
}

// checkArchives reads each platform's image archive as docker load would,
// and, where podman is installed, loads it with podman into a throw-away
// store and checks the names and tags it reports.
func checkArchives(t *testing.T, r Release) {
	t.Helper()
	for _, p := range Platforms {
		file := filepath.Join(r.Dist, "images", r.ArchiveName(p))
		for _, img := range Images {
			tag, err := name.NewTag(r.ImageRef(img), name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			image, err := tarball.ImageFromPath(file, &tag)
			if err != nil {
				t.Errorf("%s holds no %s: %v", file, tag, err)
				continue
			}
			if cf, err := image.ConfigFile(); err != nil || cf.Architecture != p.Architecture {
				t.Errorf("%s: %s is for %v, want %s", file, tag, cf, p)
			}
		}
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		t.Log("podman is not installed (hack/apt-install.sh installs it): the archives were read, not loaded")
		return
	}
	// podman refuses a run root over 50 characters, which t.TempDir's
	// names pass.
	store, err := os.MkdirTemp("", "pm") //nolint:usetesting // podman refuses a run root over 50 characters, and t.TempDir names are longer
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(store)
	cmd := exec.Command(podman, "--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"),
		"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "none",
		"load", "-i", filepath.Join(r.Dist, "images", r.ArchiveName(Platforms[0])))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("podman load: %v\n%s", err, out)
	}
	var loaded []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if names, ok := strings.CutPrefix(sc.Text(), "Loaded image"); ok {
			_, names, _ = strings.Cut(names, ": ")
			for _, n := range strings.Split(names, ",") {
				loaded = append(loaded, strings.TrimSpace(n))
			}
		}
	}
	for _, img := range Images {
		if !slices.Contains(loaded, r.ImageRef(img)) {
			t.Errorf("podman load reported %v, missing %s\n%s", loaded, r.ImageRef(img), out)
		}
	}
}
