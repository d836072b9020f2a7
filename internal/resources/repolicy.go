package resources

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
)

// ErrNotRepolicyable is returned by Repolicy for published data it cannot
// take apart: not a context of this contract, or one whose system prompt
// does not end in the tools section its manifest describes. The caller then
// publishes a policy-only context instead.
var ErrNotRepolicyable = errors.New("the published context cannot be re-rendered with a new policy")

// Repolicy re-renders a published context with the tool registry that
// policy makes of its old one. The
// content (instructions, the catalog, skills.json, templates.json, the
// active skills) stays byte for byte; the registry in manifest.json and the
// tools section at the end of system-prompt.md (tools and prompt guides)
// are replaced, and the hash is computed again. It is how a tenant's last
// good content is published under the platform's current policy while the
// tenant's input is invalid (docs/concepts.md, "Policy apart from
// content"). platformPolicy is the digest of the platform policy in the
// registry policy returns (workspace.PlatformPolicyDigest); the manifest
// carries it in place of the old one. Over budget it returns a
// *TooLargeError, like Render.
func Repolicy(old map[string]string, policy func(old contract.Registry) contract.Registry, platformPolicy string, maxContextBytes int64) (*Result, error) {
	var m contract.Manifest
	if err := json.Unmarshal([]byte(old[contract.KeyManifest]), &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotRepolicyable, contract.KeyManifest, err)
	}
	if m.APIVersion != contract.APIVersion || m.Kind != contract.ManifestKind {
		return nil, fmt.Errorf("%w: %s is not a %s %s", ErrNotRepolicyable, contract.KeyManifest, contract.APIVersion, contract.ManifestKind)
	}
	content, ok := contentOf(old[contract.KeySystemPrompt], m.Registry)
	if !ok {
		return nil, fmt.Errorf("%w: %s does not end in the tools section of its manifest", ErrNotRepolicyable, contract.KeySystemPrompt)
	}
	newReg, err := normalizeRegistry(policy(m.Registry))
	if err != nil {
		return nil, err
	}
	keepGuideProvenance(newReg, m.Registry)
	m.Registry = newReg
	m.PlatformPolicy = platformPolicy
	m.Hash = ""
	data := map[string]string{
		contract.KeySystemPrompt: joinParts(appendPart(appendPart(nil, content), toolsSection(newReg))),
		contract.KeySkills:       old[contract.KeySkills],
		contract.KeyTemplates:    old[contract.KeyTemplates],
	}
	if data[contract.KeyManifest], err = encodeJSON(m, indentOf(contract.KeyManifest)); err != nil {
		return nil, fmt.Errorf("encode %s: %w", contract.KeyManifest, err)
	}
	m.Hash = ContextHash(data)
	if data[contract.KeyManifest], err = encodeJSON(m, indentOf(contract.KeyManifest)); err != nil {
		return nil, fmt.Errorf("encode %s: %w", contract.KeyManifest, err)
	}
	bytes := DataBytes(data)
	if maxContextBytes > 0 && bytes > maxContextBytes {
		return nil, &TooLargeError{Bytes: bytes, Max: maxContextBytes}
	}
	return &Result{Data: data, Hash: m.Hash, Bytes: bytes, Manifest: m}, nil
}

// contentOf returns the part of a system prompt before its tools section,
// which BuildContext always puts last and derives from the registry alone.
// It is recomputed from the registry and must match byte for byte.
func contentOf(prompt string, reg contract.Registry) (string, bool) {
	norm, err := normalizeRegistry(reg)
	if err != nil {
		return "", false
	}
	text, ok := strings.CutSuffix(prompt, "\n")
	if !ok {
		return "", prompt == ""
	}
	tail := toolsSection(norm)
	if tail == "" {
		return text, true
	}
	if text == tail {
		return "", true
	}
	return strings.CutSuffix(text, "\n\n"+tail)
}
