// Command images builds Loadout's container images without a container
// engine (`make images`, `make push`): the manager image (/manager and the
// CLI /loadout), the agent-pod sidecar image (/loadout-hostd and its fetch helper /loadout-fetch) and the
// samples' image (/review-notes), each for linux/amd64 and linux/arm64, as
// OCI image layouts. Every image is a static binary on an empty base with a
// non-root user entry and no shell; the binaries carry their CA roots
// (golang.org/x/crypto/x509roots/fallback, through internal/caroots). The
// same commit builds the same digests.
//
//	go run ./hack/images build [--out DIR] [--version V] [--commit C] [--date RFC3339]
//	go run ./hack/images push --image manager|hostd|samples --ref REGISTRY/REPO:TAG [--out DIR]
//	go run ./hack/images release --version vX.Y.Z --registry REGISTRY[/PATH] --helm HELM [--dist DIR] [--insecure]
//
// push sends an image's SBOM with it, as an OCI artifact referring to the
// image index. release (`make release`) builds everything a user installs
// for one version: the images pushed with their SBOMs, image archives for
// docker/podman/kind load, the loadout CLI for Linux and macOS with
// SHA256SUMS, and both charts pushed as OCI artifacts whose default image
// tag is the version.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: images build|push|release [flags] (see the package comment)")
		os.Exit(2)
	}
	// Interrupted, the build stops its go builds rather than leave them
	// running.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "build":
		err = buildCmd(ctx, os.Args[2:])
	case "push":
		err = pushCmd(os.Args[2:])
	case "release":
		err = releaseCmd(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want build, push or release", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func buildCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	b := Build{Repo: "."}
	var date string
	fs.StringVar(&b.Out, "out", "bin/images", "directory of the OCI layouts (one per image) and SBOMs")
	fs.StringVar(&b.Version, "version", "dev", "version stamped into the binaries and labels (and the layouts' ref.name)")
	fs.StringVar(&b.Commit, "commit", "unknown", "source revision for the labels and binaries")
	fs.StringVar(&date, "date", "1970-01-01T00:00:00Z", "build time (RFC 3339) for the binaries, files and configs: the commit's time keeps builds reproducible")
	fs.StringVar(&b.Source, "source", "https://github.com/loadout-dev/loadout", "org.opencontainers.image.source")
	_ = fs.Parse(args)
	t, err := time.Parse(time.RFC3339, date)
	if err != nil {
		return fmt.Errorf("--date: %w", err)
	}
	b.Date = t
	digests, err := b.BuildAll(ctx)
	if err != nil {
		return err
	}
	for _, img := range Images {
		fmt.Printf("%s\t%s@%s\t%s\n", img.Name, img.Repository, digests[img.Name], filepath.Join(b.Out, img.Name))
	}
	return nil
}

func pushCmd(args []string) error {
	fs := flag.NewFlagSet("push", flag.ExitOnError)
	out := fs.String("out", "bin/images", "directory `images build` wrote")
	image := fs.String("image", "", "image to push: manager, hostd or samples")
	ref := fs.String("ref", "", "where to push it: REGISTRY/REPOSITORY:TAG")
	insecure := fs.Bool("insecure", false, "allow plain HTTP to the registry (a local test registry)")
	_ = fs.Parse(args)
	d, err := Push(filepath.Join(*out, *image), *ref, *insecure)
	if err != nil {
		return err
	}
	sbom, err := PushSBOM(filepath.Join(*out, *image+".spdx.json"), *ref, d, *insecure)
	if err != nil {
		return fmt.Errorf("the SBOM of %s: %w", *image, err)
	}
	fmt.Printf("%s@%s\tSBOM %s\n", *ref, d, sbom)
	return nil
}

func releaseCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("release", flag.ExitOnError)
	r := Release{Build: Build{Repo: ".", Source: "https://github.com/loadout-dev/loadout"}, Log: os.Stderr}
	var date string
	fs.StringVar(&r.Version, "version", "", "the release's version, vMAJOR.MINOR.PATCH[-PRE]: the images' tag, the binaries' stamp, the charts' version and appVersion")
	fs.StringVar(&r.Commit, "commit", "unknown", "source revision for the labels and binaries")
	fs.StringVar(&date, "date", "1970-01-01T00:00:00Z", "build time (RFC 3339); the commit's time keeps builds reproducible")
	fs.StringVar(&r.Registry, "registry", "", "REGISTRY[/PATH] the images (NAME:VERSION) and charts (charts/NAME) are pushed to")
	fs.StringVar(&r.Helm, "helm", "helm", "the helm binary that packages and pushes the charts")
	fs.StringVar(&r.Dist, "dist", "dist", "output directory: images/ (layouts, SBOMs, archives), bin/ (CLI, SHA256SUMS), charts/")
	fs.BoolVar(&r.Insecure, "insecure", false, "plain HTTP to the registry (a loopback test registry)")
	_ = fs.Parse(args)
	t, err := time.Parse(time.RFC3339, date)
	if err != nil {
		return fmt.Errorf("--date: %w", err)
	}
	r.Date = t
	return r.Run(ctx)
}

// Push pushes the index of an OCI layout to ref, with the credentials of
// the local Docker configuration, and returns its digest.
func Push(layoutDir, ref string, insecure bool) (v1.Hash, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.ParseReference(ref, opts...)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("--ref %q: %w", ref, err)
	}
	p, err := layout.FromPath(layoutDir)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%s: %w (run `make images` first)", layoutDir, err)
	}
	outer, err := p.ImageIndex()
	if err != nil {
		return v1.Hash{}, err
	}
	m, err := outer.IndexManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	if len(m.Manifests) != 1 {
		return v1.Hash{}, fmt.Errorf("%s holds %d indexes, want 1", layoutDir, len(m.Manifests))
	}
	idx, err := outer.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := remote.WriteIndex(tag, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return v1.Hash{}, err
	}
	return idx.Digest()
}
