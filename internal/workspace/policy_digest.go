package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/loadout-dev/loadout/internal/contract"
)

// platformPolicyDoc is what PlatformPolicyDigest hashes, as canonical JSON
// (struct fields in order, every list present).
type platformPolicyDoc struct {
	Hooks        []contract.Hook        `json:"hooks"`
	MessageTypes []contract.MessageType `json:"messageTypes"`
	PromptGuides []contract.PromptGuide `json:"promptGuides"`
	DeniedTools  []string               `json:"deniedTools"`
	// Sandbox is left out when nil, so a platform that declares none keeps
	// the digests it had before sandboxes existed.
	Sandbox *contract.Sandbox `json:"sandbox,omitempty"`
	// SkillSigners, likewise left out when none, are the platform's signer
	// requirements: a changed trusted key is a changed policy.
	SkillSigners []contract.SignerRequirement `json:"skillSigners,omitempty"`
}

// PlatformPolicyDigest is the digest ("sha256:" and hex) of the platform
// policy a registry carries: the hooks, message types and prompt guides of
// the imposed extensions (ids imposed), in registry order as published, and
// deny, the platform's denied tools (the spec.deniedTools of the imposed
// extensions), sorted and without duplicates, and sandbox, the platform's
// sandbox (the imposed extensions' declarations intersected, before any
// tenant narrows it), and reg's SkillSigners, the platform's signer
// requirements (PlatformPolicyOf sets them). Tools are left out (a tenant's
// deny list may drop a platform tool, and a tool is no policy), and so is
// whatever rendering adds later (a guide's provenance).
//
// Platform.Digest is its one caller: the manifest of every context carries
// it (contract.Manifest.PlatformPolicy) and the namespace's policy epoch
// names the current one.
func PlatformPolicyDigest(reg contract.Registry, imposed, deny []string, sandbox *contract.Sandbox) string {
	doc := platformPolicyDoc{Hooks: []contract.Hook{}, MessageTypes: []contract.MessageType{}, PromptGuides: []contract.PromptGuide{},
		DeniedTools: slices.Compact(slices.Sorted(slices.Values(slices.Clone(deny)))), Sandbox: sandbox,
		SkillSigners: reg.SkillSigners}
	if doc.DeniedTools == nil {
		doc.DeniedTools = []string{}
	}
	for _, h := range reg.Hooks {
		if slices.Contains(imposed, h.Extension) {
			doc.Hooks = append(doc.Hooks, h)
		}
	}
	for _, m := range reg.MessageTypes {
		if slices.Contains(imposed, m.Extension) {
			doc.MessageTypes = append(doc.MessageTypes, m)
		}
	}
	for _, g := range reg.PromptGuides {
		if slices.Contains(imposed, g.Extension) {
			g.Provenance = nil
			doc.PromptGuides = append(doc.PromptGuides, g)
		}
	}
	b, _ := json.Marshal(doc) // plain fields always marshal
	sum := sha256.Sum256(b)
	return contract.HashPrefix + hex.EncodeToString(sum[:])
}
