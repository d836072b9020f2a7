package ociskill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/loadout-dev/loadout/internal/skillpack"
)

// Referrer bounds: what a fetch reads of an artifact's referrers.
const (
	// MaxReferrers is the most referrers of one type a fetch reads.
	MaxReferrers = 16
	// MaxReferrerBytes bounds one referrer's manifest and its layer.
	MaxReferrerBytes = 64 << 10
)

// PushReferrer attaches data to the pushed artifact subject as an OCI 1.1
// referrer in repo: a manifest whose subject is the artifact, whose
// artifactType and one layer's media type are artifactType (a Sigstore
// bundle, `loadout push --sign-key`). A registry without the referrers API
// gets the fallback tag sha256-<hex> (go-containerregistry writes it).
func PushReferrer(ctx context.Context, subject *Artifact, repo, artifactType string, data []byte, opts ...remote.Option) (name.Digest, error) {
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.MediaType(skillpack.ManifestMediaTy),
		ArtifactType:  artifactType,
		Config:        v1.Descriptor{MediaType: types.MediaType(skillpack.EmptyMediaType), Digest: hashOf(emptyConfig), Size: int64(len(emptyConfig)), Data: emptyConfig},
		Layers:        []v1.Descriptor{{MediaType: types.MediaType(artifactType), Digest: hashOf(data), Size: int64(len(data))}},
		Subject:       &v1.Descriptor{MediaType: types.MediaType(skillpack.ManifestMediaTy), Digest: hashOf(subject.Manifest), Size: int64(len(subject.Manifest)), ArtifactType: skillpack.ArtifactType},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return name.Digest{}, err
	}
	ref, err := name.ParseReference(repo)
	if err != nil {
		return name.Digest{}, fmt.Errorf("reference %q: %w", repo, err)
	}
	a := &Artifact{Manifest: raw, Layer: data, Digest: hashOf(raw).String(), layerType: types.MediaType(artifactType)}
	return Push(ctx, a, ref.Context().Digest(a.Digest).String(), opts...)
}

// Referrers returns the layers of the referrers of ref (an artifact pinned
// by digest) whose artifactType is artifactType: at most MaxReferrers, each
// at most MaxReferrerBytes, each checked against its digest. None is an
// empty list, not an error.
func Referrers(ctx context.Context, ref name.Digest, artifactType string, opts ...remote.Option) ([][]byte, error) {
	opts = append(opts, remote.WithContext(ctx), remote.WithFilter("artifactType", artifactType))
	idx, err := remote.Referrers(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("referrers of %s: %w", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, d := range im.Manifests {
		if d.ArtifactType != artifactType {
			continue
		}
		if len(out) == MaxReferrers {
			break
		}
		if d.Size > MaxReferrerBytes {
			continue
		}
		data, err := referrerLayer(ref.Context().Digest(d.Digest.String()), artifactType, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

// referrerLayer reads one referrer's one layer, verified by its digest.
func referrerLayer(ref name.Digest, artifactType string, opts []remote.Option) ([]byte, error) {
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("referrer %s: %w", ref, err)
	}
	if hashOf(desc.Manifest).String() != ref.DigestStr() {
		return nil, fmt.Errorf("referrer %s: manifest does not match its digest", ref)
	}
	m, err := v1.ParseManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		return nil, fmt.Errorf("referrer %s: %w", ref, err)
	}
	if len(m.Layers) != 1 || string(m.Layers[0].MediaType) != artifactType || m.Layers[0].Size > MaxReferrerBytes {
		return nil, fmt.Errorf("referrer %s: want one layer of %s, at most %d bytes", ref, artifactType, MaxReferrerBytes)
	}
	l, err := remote.Layer(ref.Context().Digest(m.Layers[0].Digest.String()), opts...)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, MaxReferrerBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != m.Layers[0].Size || hashOf(data) != m.Layers[0].Digest {
		return nil, fmt.Errorf("referrer %s: layer does not match its digest", ref)
	}
	return data, nil
}
