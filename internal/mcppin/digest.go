package mcppin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/mcpclient"
)

// Definition is what a pin covers: the tool as agents see it, under the
// server's name (a prefix is the Extension's, not the server's).
type Definition struct {
	Name         string                       `json:"name"`
	Description  string                       `json:"description"`
	InputSchema  any                          `json:"inputSchema,omitempty"`
	OutputSchema any                          `json:"outputSchema,omitempty"`
	Annotations  *v1alpha1.MCPToolAnnotations `json:"annotations,omitempty"`
}

// DefinitionOf is the definition a discovered tool carries. Schemas are
// decoded into plain values so that the digest does not depend on how the
// JSON was spelled: the API server re-encodes status (key order, number
// spelling), and the digest of what comes back must be the same.
func DefinitionOf(t *v1alpha1.DiscoveredTool) (Definition, error) {
	d := Definition{Name: t.ServerName, Description: t.Description, Annotations: t.Annotations}
	var err error
	if d.InputSchema, err = decode(t.InputSchema); err != nil {
		return d, fmt.Errorf("tool %q: inputSchema: %w", t.ServerName, err)
	}
	if d.OutputSchema, err = decode(t.OutputSchema); err != nil {
		return d, fmt.Errorf("tool %q: outputSchema: %w", t.ServerName, err)
	}
	return d, nil
}

func decode(raw *runtime.RawExtension) (any, error) {
	if raw == nil || len(raw.Raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Digest is sha256:<hex> over the definition's canonical JSON: fields in
// the order of Definition, object keys sorted (encoding/json sorts map
// keys), numbers as float64 prints them.
func (d Definition) Digest() string {
	b, err := json.Marshal(d)
	if err != nil {
		// Values decoded from JSON always encode again.
		panic(fmt.Sprintf("mcppin: encoding a decoded definition: %v", err))
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DigestOf is the digest of a discovered tool's definition.
func DigestOf(t *v1alpha1.DiscoveredTool) (string, error) {
	d, err := DefinitionOf(t)
	if err != nil {
		return "", err
	}
	return d.Digest(), nil
}

// FromClient is a tool mcpclient discovered as the Extension's status
// records it, its digest included. The manager's discovery and `loadout
// mcp pin` both go through here, so a pin written from a live server is
// the digest the manager computes.
func FromClient(t mcpclient.Tool) (v1alpha1.DiscoveredTool, error) {
	dt := v1alpha1.DiscoveredTool{Name: v1alpha1.ToolName(t.Name), ServerName: t.ServerName, Description: t.Description,
		InputSchema: &runtime.RawExtension{Raw: t.InputSchema}}
	if len(t.OutputSchema) > 0 {
		dt.OutputSchema = &runtime.RawExtension{Raw: t.OutputSchema}
	}
	if a := t.Annotations; a != nil {
		dt.Annotations = &v1alpha1.MCPToolAnnotations{Title: a.Title, ReadOnlyHint: a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint, IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
	}
	var err error
	dt.Digest, err = DigestOf(&dt)
	return dt, err
}
