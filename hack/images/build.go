package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Image is one image this tool builds: its binaries and its entrypoint.
type Image struct {
	// Name is the image's directory under the output and its SBOM's name.
	Name string
	// Repository is the default repository the chart names.
	Repository string
	// Binaries maps each file of the image (at its root) to the main package
	// built into it.
	Binaries map[string]string
	// Entrypoint is the binary the image runs.
	Entrypoint string
}

// Images are the images of a release: the manager with the full CLI, the
// agent-pod sidecar with /loadout-hostd and its fetch helper
// /loadout-fetch, and the samples' Services
// (/review-notes, which config/samples runs), kept out of the product's
// images. The Dockerfile's targets manager, hostd and samples produce the
// same files.
var Images = []Image{
	{Name: "manager", Repository: "ghcr.io/loadout-dev/loadout",
		Binaries: map[string]string{"manager": "./cmd/manager", "loadout": "./cmd/loadout"}, Entrypoint: "/manager"},
	{Name: "hostd", Repository: "ghcr.io/loadout-dev/loadout-hostd",
		Binaries: map[string]string{"loadout-hostd": "./cmd/loadout-hostd", "loadout-fetch": "./cmd/loadout-fetch"}, Entrypoint: "/loadout-hostd"},
	{Name: "samples", Repository: "ghcr.io/loadout-dev/loadout-samples",
		Binaries: map[string]string{"review-notes": "./samples/review-notes"}, Entrypoint: "/review-notes"},
}

// Platforms are the platforms every image is built for.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// nonRoot is the user the images run as (the distroless "nonroot" user).
const nonRoot = "65532:65532"

// Build settings shared by every image.
type Build struct {
	// Repo is the module root the binaries are built from.
	Repo string
	// Version, Commit and Date are stamped into the binaries (internal/buildinfo)
	// and the OCI labels.
	Version, Commit string
	Date            time.Time
	// Source is the repository URL for org.opencontainers.image.source.
	Source string
	// Out is where each image's OCI layout (Out/NAME) and SBOM go.
	Out string
}

// BuildAll builds every image for every platform and returns the index
// digest of each, by name.
func (b Build) BuildAll(ctx context.Context) (map[string]v1.Hash, error) {
	digests := map[string]v1.Hash{}
	for _, img := range Images {
		d, err := b.BuildImage(ctx, img)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", img.Name, err)
		}
		digests[img.Name] = d
	}
	return digests, nil
}

// BuildImage builds one image's index (one manifest per platform) into an
// OCI layout at Out/NAME, replacing what was there, with its SBOM beside it.
// The same sources and settings give the same digest: binaries are built with
// -trimpath and no VCS stamp, and every file, time and JSON key is fixed.
func (b Build) BuildImage(ctx context.Context, img Image) (v1.Hash, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var sbomFrom string
	for _, p := range Platforms {
		dir, err := os.MkdirTemp("", "loadout-image-")
		if err != nil {
			return v1.Hash{}, err
		}
		defer os.RemoveAll(dir)
		for file, pkg := range img.Binaries {
			if err := b.goBuild(ctx, p, pkg, filepath.Join(dir, file)); err != nil {
				return v1.Hash{}, err
			}
		}
		if sbomFrom == "" {
			sbomFrom = filepath.Join(dir, strings.TrimPrefix(img.Entrypoint, "/"))
			if err := writeSBOM(filepath.Join(b.Out, img.Name+".spdx.json"), img, sbomFrom, b.Date); err != nil {
				return v1.Hash{}, err
			}
		}
		image, err := b.platformImage(img, p, dir)
		if err != nil {
			return v1.Hash{}, err
		}
		platform := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: image, Descriptor: v1.Descriptor{Platform: &platform}})
	}
	idx = mutate.Annotations(idx, b.labels()).(v1.ImageIndex)
	dst := filepath.Join(b.Out, img.Name)
	if err := os.RemoveAll(dst); err != nil {
		return v1.Hash{}, err
	}
	lp, err := layout.Write(dst, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": b.Version})); err != nil {
		return v1.Hash{}, err
	}
	return idx.Digest()
}

// goBuild cross-compiles one static binary.
func (b Build) goBuild(ctx context.Context, p v1.Platform, pkg, out string) error {
	const info = "github.com/loadout-dev/loadout/internal/buildinfo"
	ldflags := fmt.Sprintf("-s -w -buildid= -X %s.version=%s -X %s.commit=%s -X %s.date=%s",
		info, b.Version, info, b.Commit, info, b.Date.UTC().Format(time.RFC3339))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, pkg)
	cmd.Dir = b.Repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s for %s/%s: %w: %s", pkg, p.OS, p.Architecture, err, stderr.String())
	}
	return nil
}

// labels are the OCI labels of every image and index.
func (b Build) labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.source":   b.Source,
		"org.opencontainers.image.revision": b.Commit,
		"org.opencontainers.image.version":  b.Version,
		"org.opencontainers.image.created":  b.Date.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
}

// platformImage is one platform's image: a single layer over an empty base
// (no shell, no package manager), run as the non-root user.
func (b Build) platformImage(img Image, p v1.Platform, binDir string) (v1.Image, error) {
	files, err := rootFiles(img, binDir, b.Repo)
	if err != nil {
		return nil, err
	}
	layerTar, err := tarOf(files, b.Date)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerTar)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	image, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cf, err := image.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = p.OS, p.Architecture, v1.Time{Time: b.Date.UTC()}
	cf.Config = v1.Config{User: nonRoot, Entrypoint: []string{img.Entrypoint}, WorkingDir: "/", Labels: b.labels()}
	cf.History = []v1.History{{Created: v1.Time{Time: b.Date.UTC()}, CreatedBy: "loadout hack/images", Comment: img.Name}}
	return mutate.ConfigFile(image, cf)
}

// imageFile is one file of an image's root filesystem.
type imageFile struct {
	path string // relative to /
	mode int64
	data []byte
}

// rootFiles are every file of an image: its binaries (built into binDir)
// and the static files.
func rootFiles(img Image, binDir, repo string) ([]imageFile, error) {
	out, err := staticFiles(repo)
	if err != nil {
		return nil, err
	}
	for file := range img.Binaries {
		data, err := os.ReadFile(filepath.Join(binDir, file))
		if err != nil {
			return nil, err
		}
		out = append(out, imageFile{path: file, mode: 0o755, data: data})
	}
	slices.SortFunc(out, func(a, b imageFile) int { return strings.Compare(a.path, b.path) })
	return out, nil
}

// staticFiles are the files of hack/images/rootfs, the same in every image:
// the non-root user's passwd and group entries.
func staticFiles(repo string) ([]imageFile, error) {
	var out []imageFile
	root := filepath.Join(repo, "hack", "images", "rootfs")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		out = append(out, imageFile{path: filepath.ToSlash(rel), mode: 0o644, data: data})
		return err
	})
	return out, err
}

// FileList is the sorted list of files (paths from /) an image holds: what a
// test compares with the Dockerfile's stages.
func FileList(img Image, repo string) ([]string, error) {
	files, err := staticFiles(repo)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		out = append(out, "/"+f.path)
	}
	for file := range img.Binaries {
		out = append(out, "/"+file)
	}
	slices.Sort(out)
	return out, nil
}

// tarOf writes files, with their parent directories, as a tar with fixed
// owners and times, in path order.
func tarOf(files []imageFile, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, f := range files {
		for d := path.Dir(f.path); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var entries []imageFile
	for d := range dirs {
		entries = append(entries, imageFile{path: d + "/", mode: 0o755})
	}
	entries = append(entries, files...)
	slices.SortFunc(entries, func(a, b imageFile) int { return strings.Compare(a.path, b.path) })
	for _, e := range entries {
		hdr := &tar.Header{Name: e.path, Mode: e.mode, ModTime: mtime.UTC(), Uname: "root", Gname: "root"}
		if strings.HasSuffix(e.path, "/") {
			hdr.Typeflag = tar.TypeDir
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
