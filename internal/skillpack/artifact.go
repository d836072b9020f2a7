package skillpack

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Media types of a skill artifact (docs/concepts.md): an OCI 1.1 image
// manifest whose artifactType is ArtifactType, whose config is the empty
// descriptor, and whose one layer is the skill directory as an uncompressed
// tar (see Tar). internal/ociskill packs and pushes it.
const (
	ArtifactType    = "application/vnd.loadout.skill.v1"
	LayerMediaType  = "application/vnd.loadout.skill.layer.v1.tar"
	EmptyMediaType  = "application/vnd.oci.empty.v1+json"
	ManifestMediaTy = "application/vnd.oci.image.manifest.v1+json"
)

// Descriptor is the part of an OCI descriptor a fetch reads: what a blob is,
// its digest ("sha256:<hex>") and its size.
type Descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
}

// Hex is the descriptor's SHA-256 in hex, or "" when it is not a sha256
// digest of the right length.
func (d Descriptor) Hex() string {
	h, ok := strings.CutPrefix(d.Digest, "sha256:")
	if !ok || len(h) != 64 {
		return ""
	}
	return h
}

// Manifest is the part of an OCI image manifest a fetch reads. It is parsed
// with encoding/json, not a registry client's types, so that reading an
// artifact from the verified cache (internal/sourcecache, in the sidecar)
// links no registry client.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	ArtifactType  string       `json:"artifactType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// ParseManifest parses an OCI image manifest.
func ParseManifest(raw []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, fmt.Errorf("parse manifest: %w", err)
	}
	return m, nil
}

// LayerOf checks that raw is a skill artifact manifest and returns its layer's
// descriptor.
func LayerOf(raw []byte) (Descriptor, error) {
	m, err := ParseManifest(raw)
	if err != nil {
		return Descriptor{}, err
	}
	if m.ArtifactType != ArtifactType {
		return Descriptor{}, fmt.Errorf("artifactType is %q, want %q: not a Loadout skill (made by `loadout push`)", m.ArtifactType, ArtifactType)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != LayerMediaType {
		return Descriptor{}, fmt.Errorf("want exactly one layer of media type %s", LayerMediaType)
	}
	l := m.Layers[0]
	if l.Size < 0 || l.Size > MaxTreeBytes*2 {
		return Descriptor{}, fmt.Errorf("layer size %d is out of bounds", l.Size)
	}
	if l.Hex() == "" {
		return Descriptor{}, fmt.Errorf("layer digest %q is not sha256", l.Digest)
	}
	return l, nil
}
