package main

import (
	"archive/tar"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testnet"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestImages_BuiltPushedPulledAndRun builds every image twice (the same
// digests), pushes them to a registry on loopback, pulls them back and
// checks every platform's config (non-root user, entrypoint, labels, no
// shell), then runs the binaries of the linux/amd64 root filesystems:
// --version of each, hostd serving /healthz on the samples' context, and
// the samples' review-notes serving /healthz.
func TestImages_BuiltPushedPulledAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds eight binaries; not in -short")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b := Build{Repo: repo, Version: "v0.0.0-test", Commit: "0123456789abcdef", Date: time.Unix(1700000000, 0),
		Source: "https://github.com/loadout-dev/loadout", Out: t.TempDir()}
	first, err := b.BuildAll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	again := b
	again.Out = t.TempDir()
	second, err := again.BuildAll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range Images {
		if first[img.Name] != second[img.Name] {
			t.Errorf("image %s: two builds gave %s and %s", img.Name, first[img.Name], second[img.Name])
		}
		if _, err := os.Stat(filepath.Join(b.Out, img.Name+".spdx.json")); err != nil {
			t.Errorf("image %s has no SBOM: %v", img.Name, err)
		}
	}

	host := testnet.Registry(t)
	roots := map[string]string{}
	for _, img := range Images {
		ref := host + "/loadout/" + img.Name + ":test"
		pushed, err := Push(filepath.Join(b.Out, img.Name), ref, true)
		if err != nil {
			t.Fatalf("push %s: %v", img.Name, err)
		}
		if pushed != first[img.Name] {
			t.Errorf("pushed %s as %s, built %s", img.Name, pushed, first[img.Name])
		}
		roots[img.Name] = checkPulled(t, img, ref, repo)
	}

	for _, bin := range []string{"manager", "loadout"} {
		out, err := exec.Command(filepath.Join(roots["manager"], bin), versionArgs(bin)...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "v0.0.0-test") {
			t.Errorf("/%s from the manager image: %v: %s", bin, err, out)
		}
	}
	hostd := filepath.Join(roots["hostd"], "loadout-hostd")
	if out, err := exec.Command(hostd, "version").CombinedOutput(); err != nil || !strings.Contains(string(out), "v0.0.0-test") {
		t.Errorf("/loadout-hostd version: %v: %s", err, out)
	}
	serveSamples(t, filepath.Join(roots["manager"], "loadout"), hostd, repo)

	reviewNotes := filepath.Join(roots["samples"], "review-notes")
	if out, err := exec.Command(reviewNotes, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), "v0.0.0-test") {
		t.Errorf("/review-notes --version: %v: %s", err, out)
	}
	addr := testnet.FreeAddr(t)
	startUntilHealthy(t, "the samples image's review-notes", addr, reviewNotes, "--addr", addr)
}

func versionArgs(bin string) []string {
	if bin == "manager" {
		return []string{"--version"}
	}
	return []string{"version"}
}

// pullIndex pulls the image index at ref from a plain-HTTP registry and
// returns the parsed reference, the index and its digest.
func pullIndex(t *testing.T, ref string) (name.Reference, v1.ImageIndex, v1.Hash) {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(r)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return r, idx, d
}

// checkPulled pulls ref, checks each platform's image and returns the
// directory holding the linux/amd64 root filesystem.
func checkPulled(t *testing.T, img Image, ref, repo string) string {
	t.Helper()
	_, idx, _ := pullIndex(t, ref)
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	var root string
	wantFiles, err := FileList(img, repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, desc := range m.Manifests {
		platforms = append(platforms, desc.Platform.String())
		image, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := image.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		c := cf.Config
		if c.User != nonRoot || !slices.Equal(c.Entrypoint, []string{img.Entrypoint}) || len(c.Cmd) != 0 ||
			c.Labels["org.opencontainers.image.revision"] != "0123456789abcdef" || c.Labels["org.opencontainers.image.version"] != "v0.0.0-test" ||
			c.Labels["org.opencontainers.image.source"] == "" || cf.OS != desc.Platform.OS || cf.Architecture != desc.Platform.Architecture {
			t.Errorf("%s %s: config %+v (%s/%s)", img.Name, desc.Platform, c, cf.OS, cf.Architecture)
		}
		files := extract(t, image, desc.Platform)
		if !slices.Equal(files.list, wantFiles) {
			t.Errorf("%s %s holds %v, want %v", img.Name, desc.Platform, files.list, wantFiles)
		}
		for _, shell := range []string{"/bin/sh", "/bin/bash", "/bin/busybox"} {
			if slices.Contains(files.list, shell) {
				t.Errorf("%s %s has a shell: %s", img.Name, desc.Platform, shell)
			}
		}
		if desc.Platform.Architecture == "amd64" {
			root = files.dir
		}
	}
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Errorf("%s: platforms %v, want %v", img.Name, platforms, want)
	}
	return root
}

type rootfs struct {
	dir  string
	list []string
}

// extract writes an image's flattened root filesystem to a new directory and
// lists its regular files.
func extract(t *testing.T, image v1.Image, p *v1.Platform) rootfs {
	t.Helper()
	dir := t.TempDir()
	rc := mutate.Extract(image)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	var out rootfs
	out.dir = dir
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		target := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			out.list = append(out.list, "/"+strings.TrimPrefix(hdr.Name, "/"))
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY, os.FileMode(hdr.Mode))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
		default:
			out.list = append(out.list, "/"+strings.TrimPrefix(hdr.Name, "/")+" (type "+string(hdr.Typeflag)+")")
		}
	}
	slices.Sort(out.list)
	return out
}

// serveSamples runs the image's hostd on the context the image's own CLI
// previews from config/samples, and waits for /healthz.
func serveSamples(t *testing.T, loadout, hostd, repo string) {
	t.Helper()
	raw, err := exec.Command(loadout, "preview", "-f", filepath.Join(repo, "config", "samples")).Output()
	if err != nil {
		t.Fatalf("loadout preview: %v", err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(raw, &cm); err != nil || len(cm.Data) == 0 {
		t.Fatalf("loadout preview printed no ConfigMap: %v", err)
	}
	ctxDir := resourcestest.Tree(t, cm.Data)
	addr := testnet.FreeAddr(t)
	startUntilHealthy(t, "the image's hostd", addr, hostd, "--context-dir", ctxDir, "--addr", addr, "--allow-unsigned-context")
}

// startUntilHealthy runs bin with args until the test ends, and waits for it
// to serve /healthz on addr.
func startUntilHealthy(t *testing.T, what, addr, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	t.Logf("waiting for %s to serve /healthz on %s", what, addr)
	testnet.WaitStatus(t, "http://"+addr+"/healthz", http.StatusOK)
}

// TestImages_DockerfileStagesHoldTheSameFiles: the Dockerfile (for those
// with a container engine) and `make images` produce the same files, user
// and entrypoint for each image.
func TestImages_DockerfileStagesHoldTheSameFiles(t *testing.T) {
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stage string
	copies, users, entrypoints, bases := map[string][]string{}, map[string]string{}, map[string]string{}, map[string]string{}
	for line := range strings.SplitSeq(string(raw), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 4 && f[0] == "FROM" && strings.EqualFold(f[len(f)-2], "AS"):
			stage, bases[f[len(f)-1]] = f[len(f)-1], f[len(f)-3]
		case len(f) >= 3 && f[0] == "COPY":
			copies[stage] = append(copies[stage], f[len(f)-1])
		case len(f) == 2 && f[0] == "USER":
			users[stage] = f[1]
		case len(f) >= 2 && f[0] == "ENTRYPOINT":
			entrypoints[stage] = strings.Join(f[1:], " ")
		}
	}
	// A stage built FROM another stage holds that stage's files and runs as
	// its user unless it names its own; base ends as the image it starts from.
	resolve := func(stage string) (files []string, user, base string) {
		for s := stage; ; s = bases[s] {
			files = append(files, copies[s]...)
			if user == "" {
				user = users[s]
			}
			if _, isStage := bases[bases[s]]; !isStage {
				return files, user, bases[s]
			}
		}
	}
	for _, img := range Images {
		want, err := FileList(img, "../..")
		if err != nil {
			t.Fatal(err)
		}
		files, user, base := resolve(img.Name)
		got := slices.Sorted(slices.Values(files))
		if !slices.Equal(got, want) {
			t.Errorf("Dockerfile stage %s copies %v; make images builds %v", img.Name, got, want)
		}
		if base != "scratch" || user != nonRoot || entrypoints[img.Name] != `["`+img.Entrypoint+`"]` {
			t.Errorf("Dockerfile stage %s: FROM %s, USER %s, ENTRYPOINT %s; want scratch, %s, [%q]",
				img.Name, base, user, entrypoints[img.Name], nonRoot, img.Entrypoint)
		}
	}
}

// TestImages_ChartNamesTheImagesBuilt: the chart's default images are the
// repositories `make images` builds (the tag defaults to the chart's
// appVersion, the version a release builds with).
func TestImages_ChartNamesTheImagesBuilt(t *testing.T) {
	raw, err := os.ReadFile("../../charts/loadout/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Image      struct{ Repository string } `json:"image"`
		HostdImage struct{ Repository string } `json:"hostdImage"`
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ chart, built string }{
		{values.Image.Repository, Images[0].Repository}, {values.HostdImage.Repository, Images[1].Repository},
	} {
		if c.chart != c.built {
			t.Errorf("the chart's default image %q is not the image make images builds (%q)", c.chart, c.built)
		}
	}
}
