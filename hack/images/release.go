package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// SBOMArtifactType is the artifact type of an image's SBOM in the registry:
// an OCI artifact whose subject is the image index, found through the
// referrers API (or its fallback tag), as `oras discover` or
// `crane referrers` list it.
const SBOMArtifactType = "application/spdx+json"

// CLIPlatforms are the platforms the loadout CLI is released for.
var CLIPlatforms = []v1.Platform{
	{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"},
	{OS: "darwin", Architecture: "amd64"}, {OS: "darwin", Architecture: "arm64"},
}

// Charts are the charts a release packages and pushes, from charts/.
var Charts = []string{"loadout-crds", "loadout"}

// Release is everything a user installs for one version, built with that
// version and pushed: the images (both platforms, each with its SBOM as an
// OCI referrer), image archives that docker, podman and kind load, the
// loadout CLI for Linux and macOS with checksums, and the charts as OCI
// artifacts whose default image tag is the version.
type Release struct {
	// Build holds the version, commit and date; its Out is set to Dist/images.
	Build
	// Registry is REGISTRY[/PATH]: images go to Registry/NAME:Version,
	// charts to oci://Registry/charts.
	Registry string
	// Insecure allows plain HTTP to the registry (a loopback test registry).
	Insecure bool
	// Helm is the helm binary that packages and pushes the charts.
	Helm string
	// Dist is the output directory: images/, bin/, charts/.
	Dist string
	// Log receives one line per step.
	Log io.Writer
}

// ImageRef is where the release pushes img.
func (r Release) ImageRef(img Image) string {
	return r.Registry + "/" + path.Base(img.Repository) + ":" + r.Version
}

// ChartVersion is the charts' SemVer version: Version without its "v".
func (r Release) ChartVersion() string { return strings.TrimPrefix(r.Version, "v") }

var semver = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

// Run builds and pushes the release.
func (r Release) Run(ctx context.Context) error {
	if !semver.MatchString(r.Version) {
		return fmt.Errorf("VERSION=%q: a release version is vMAJOR.MINOR.PATCH[-PRERELEASE] (a chart's version must be SemVer)", r.Version)
	}
	if r.Registry == "" || strings.Contains(r.Registry, "://") {
		return fmt.Errorf("REGISTRY=%q: want a registry host and optional path, e.g. ghcr.io/loadout-dev", r.Registry)
	}
	r.Out = filepath.Join(r.Dist, "images")
	r.logf("building the images %s for %d platforms", r.Version, len(Platforms))
	if _, err := r.BuildAll(ctx); err != nil {
		return err
	}
	for _, img := range Images {
		d, err := Push(filepath.Join(r.Out, img.Name), r.ImageRef(img), r.Insecure)
		if err != nil {
			return fmt.Errorf("pushing %s: %w", img.Name, err)
		}
		sbom, err := PushSBOM(filepath.Join(r.Out, img.Name+".spdx.json"), r.ImageRef(img), d, r.Insecure)
		if err != nil {
			return fmt.Errorf("attaching the SBOM of %s: %w", img.Name, err)
		}
		r.logf("pushed %s@%s, SBOM %s", r.ImageRef(img), d, sbom)
	}
	if err := r.archives(); err != nil {
		return err
	}
	if err := r.binaries(ctx); err != nil {
		return err
	}
	return r.charts(ctx)
}

func (r Release) logf(format string, a ...any) {
	if r.Log != nil {
		fmt.Fprintf(r.Log, "release: "+format+"\n", a...)
	}
}

// PushSBOM pushes the SBOM file as an OCI artifact whose subject is the
// image index at ref@digest, so the registry lists it among the index's
// referrers, and returns the artifact's digest.
func PushSBOM(file, ref string, digest v1.Hash, insecure bool) (v1.Hash, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return v1.Hash{}, err
	}
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return v1.Hash{}, err
	}
	subjectRef := r.Context().Digest(digest.String())
	subject, err := remote.Head(subjectRef, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%s: %w", subjectRef, err)
	}
	art, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1),
		mutate.Addendum{Layer: static.NewLayer(data, SBOMArtifactType),
			Annotations: map[string]string{"org.opencontainers.image.title": filepath.Base(file)}})
	if err != nil {
		return v1.Hash{}, err
	}
	// The artifact's type is its config's media type (the OCI 1.1 fallback
	// where artifactType is unset), what the referrers API reports.
	art = mutate.ConfigMediaType(art, SBOMArtifactType)
	art = mutate.Subject(art, *subject).(v1.Image)
	ad, err := art.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.Write(r.Context().Digest(ad.String()), art, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return v1.Hash{}, err
	}
	return ad, nil
}

// ArchiveName is the file of the image archive for a platform.
func (r Release) ArchiveName(p v1.Platform) string {
	return fmt.Sprintf("loadout-images_%s_%s_%s.tar", r.Version, p.OS, p.Architecture)
}

// archives writes, per platform, one docker-format archive of the three
// images tagged as the release pushed them: `docker load`, `podman load` and
// `kind load image-archive` take it, for clusters without a registry.
func (r Release) archives() error {
	for _, p := range Platforms {
		refs := map[name.Reference]v1.Image{}
		for _, img := range Images {
			image, err := platformImageOf(filepath.Join(r.Out, img.Name), p)
			if err != nil {
				return fmt.Errorf("%s %s: %w", img.Name, p, err)
			}
			tag, err := name.NewTag(r.ImageRef(img))
			if err != nil {
				return err
			}
			refs[tag] = image
		}
		file := filepath.Join(r.Out, r.ArchiveName(p))
		if err := tarball.MultiRefWriteToFile(file, refs); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		r.logf("wrote %s", file)
	}
	return nil
}

// platformImageOf returns the image for p of the index an OCI layout holds.
func platformImageOf(layoutDir string, p v1.Platform) (v1.Image, error) {
	lp, err := layout.FromPath(layoutDir)
	if err != nil {
		return nil, err
	}
	outer, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	om, err := outer.IndexManifest()
	if err != nil || len(om.Manifests) != 1 {
		return nil, fmt.Errorf("%s holds no single index: %w", layoutDir, err)
	}
	idx, err := outer.ImageIndex(om.Manifests[0].Digest)
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == p.OS && d.Platform.Architecture == p.Architecture {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("%s has no image for %s", layoutDir, p)
}

// binaries builds the loadout CLI for CLIPlatforms into Dist/bin, with a
// SHA256SUMS file that `sha256sum -c` checks.
func (r Release) binaries(ctx context.Context) error {
	dir := filepath.Join(r.Dist, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var sums []string
	for _, p := range CLIPlatforms {
		file := fmt.Sprintf("loadout_%s_%s_%s", r.Version, p.OS, p.Architecture)
		if err := r.goBuild(ctx, p, "./cmd/loadout", filepath.Join(dir, file)); err != nil {
			return fmt.Errorf("loadout for %s: %w", p, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		sums = append(sums, hex.EncodeToString(sum[:])+"  "+file+"\n")
	}
	sort.Strings(sums)
	r.logf("built the loadout CLI for %d platforms into %s", len(CLIPlatforms), dir)
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Join(sums, "")), 0o644) //nolint:gosec // published checksums
}

// charts packages each chart with the release's version as its version and
// appVersion (so the images' default tag is the version) and its images'
// repositories in Registry, and pushes it to oci://Registry/charts.
func (r Release) charts(ctx context.Context) error {
	out := filepath.Join(r.Dist, "charts")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, c := range Charts {
		src := filepath.Join(r.Repo, "charts", c)
		tmp, err := os.MkdirTemp("", "loadout-chart-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dst := filepath.Join(tmp, c)
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			return err
		}
		if err := r.pointValuesAtRegistry(filepath.Join(dst, "values.yaml")); err != nil {
			return err
		}
		if err := r.helm(ctx, "package", dst, "--version", r.ChartVersion(), "--app-version", r.Version, "--destination", out); err != nil {
			return err
		}
		pkg := filepath.Join(out, c+"-"+r.ChartVersion()+".tgz")
		args := []string{"push", pkg, "oci://" + r.Registry + "/charts"}
		if r.Insecure {
			args = append(args, "--plain-http")
		}
		if err := r.helm(ctx, args...); err != nil {
			return err
		}
		r.logf("pushed chart oci://%s/charts/%s:%s", r.Registry, c, r.ChartVersion())
	}
	return nil
}

// pointValuesAtRegistry names the release's image repositories in a chart's
// values (the loadout chart's image and hostdImage).
func (r Release) pointValuesAtRegistry(values string) error {
	data, err := os.ReadFile(values)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	for _, img := range Images {
		from := []byte("repository: " + img.Repository + "\n")
		data = bytes.ReplaceAll(data, from, []byte("repository: "+r.Registry+"/"+path.Base(img.Repository)+"\n"))
	}
	return os.WriteFile(values, data, fs.FileMode(0o644))
}

// helm runs the helm binary with the user's environment: `helm registry
// login` (or Docker's credentials) authorises the push.
func (r Release) helm(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, r.Helm, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
