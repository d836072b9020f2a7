// Package ociskill packs a skill tree into an OCI artifact and talks to
// registries about it (push, referrers): what `loadout push` and the skill
// fetcher (internal/sources) need of go-containerregistry. The sidecar does
// not link it: it reads artifacts from the verified cache
// (internal/sourcecache), and the format's names and LayerOf are in
// internal/skillpack, which imports only the standard library.
package ociskill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/loadout-dev/loadout/internal/skillpack"
)

// emptyConfig is the OCI empty descriptor's content.
var emptyConfig = []byte("{}")

// Artifact is a packed skill: its manifest, its one layer and the digest that
// pins it ("sha256:<hex>" of the manifest bytes).
type Artifact struct {
	Manifest []byte
	Layer    []byte
	Digest   string
	// layerType is the layer's media type when not skillpack.LayerMediaType (a
	// referrer's, referrer.go).
	layerType types.MediaType
}

// Pack packs a tree into an artifact. The manifest is encoded by Go's
// encoding/json from fixed structs and carries no annotations (no creation
// time), so the same tree always has the same digest.
func Pack(t skillpack.Tree) (*Artifact, error) {
	layer, err := skillpack.Tar(t)
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.MediaType(skillpack.ManifestMediaTy),
		ArtifactType:  skillpack.ArtifactType,
		Config: v1.Descriptor{
			MediaType: types.MediaType(skillpack.EmptyMediaType),
			Digest:    hashOf(emptyConfig),
			Size:      int64(len(emptyConfig)),
			Data:      emptyConfig,
		},
		Layers: []v1.Descriptor{{MediaType: types.MediaType(skillpack.LayerMediaType), Digest: hashOf(layer), Size: int64(len(layer))}},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &Artifact{Manifest: raw, Layer: layer, Digest: hashOf(raw).String()}, nil
}

func hashOf(b []byte) v1.Hash {
	sum := sha256.Sum256(b)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}

// Push uploads the artifact to repo (REGISTRY/REPOSITORY, with or without a
// tag) and returns the reference pinned by digest that a Skill names.
func Push(ctx context.Context, a *Artifact, repo string, opts ...remote.Option) (name.Digest, error) {
	ref, err := name.ParseReference(repo)
	if err != nil {
		return name.Digest{}, fmt.Errorf("reference %q: %w", repo, err)
	}
	img, err := partial.CompressedToImage(&artifactImage{a: a})
	if err != nil {
		return name.Digest{}, err
	}
	if got, err := img.Digest(); err != nil || got.String() != a.Digest {
		return name.Digest{}, fmt.Errorf("artifact digest %v does not match its manifest (%w)", got, err)
	}
	if err := remote.Write(ref, img, append(opts, remote.WithContext(ctx))...); err != nil {
		return name.Digest{}, fmt.Errorf("push %s: %w", ref, err)
	}
	return ref.Context().Digest(a.Digest), nil
}

// artifactImage presents an Artifact as a go-containerregistry image, so
// remote.Write uploads its blobs and manifest as they are.
type artifactImage struct{ a *Artifact }

func (i *artifactImage) MediaType() (types.MediaType, error) {
	return types.MediaType(skillpack.ManifestMediaTy), nil
}
func (i *artifactImage) RawManifest() ([]byte, error)   { return i.a.Manifest, nil }
func (i *artifactImage) RawConfigFile() ([]byte, error) { return emptyConfig, nil }

func (i *artifactImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	switch h {
	case hashOf(i.a.Layer):
		if i.a.layerType != "" {
			return static.NewLayer(i.a.Layer, i.a.layerType), nil
		}
		return static.NewLayer(i.a.Layer, types.MediaType(skillpack.LayerMediaType)), nil
	case hashOf(emptyConfig):
		return static.NewLayer(emptyConfig, types.MediaType(skillpack.EmptyMediaType)), nil
	}
	return nil, fmt.Errorf("artifact has no blob %s", h)
}
