package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// The policy epoch (docs/context-contract.md, "Policy epoch"): one ConfigMap
// per namespace that holds Workspaces, written by the manager once per
// platform change, naming the digest of the platform policy the
// namespace's contexts must carry. The agent-pod policy mounts it beside the
// context, and hostd serves a context only while the epoch accepts its
// Manifest.PlatformPolicy.
const (
	// EpochConfigMap is the name of the epoch ConfigMap in each namespace.
	EpochConfigMap = "loadout-policy"
	// EpochLabel marks the epoch ConfigMap; the admission policies let only
	// the manager write or delete a ConfigMap that carries it.
	EpochLabel = "loadout.dev/policy-epoch"
	// KeyPolicy holds the PolicyEpoch document; KeySignature beside it holds
	// the manager's signature of its EpochHash.
	KeyPolicy = "policy.json"
	// AgentsUnderSandboxAnnotation on the epoch ConfigMap is "true" when the
	// namespace's platform policy declares agentsUnderLoadoutSandbox: the
	// admission policy loadout-agent-pods-sandboxed takes the epoch as its
	// parameter and then admits only agent pods whose containers start
	// under the tree's `loadout sandbox` (config/policy/agent_sandbox_policy.yaml).
	// Only the manager writes the epoch (loadout-policy-epochs), so a tenant
	// can neither claim nor drop it.
	AgentsUnderSandboxAnnotation = "loadout.dev/agents-under-loadout-sandbox"
)

// DenyAllExtension is the id of the hooks of a deny-all context (the context
// of a Workspace being deleted, or whose platform policy cannot be
// published): every tool denied, every prompt refused. It carries no
// platform policy, and hostd serves it under any epoch: it lets nothing
// through.
const DenyAllExtension = "loadout-deny-all"

// DeniesEverything reports whether m is a deny-all context: no platform
// policy, only the deny-all hooks, and every tool denied.
func DeniesEverything(m Manifest) bool {
	if m.PlatformPolicy != "" || len(m.Registry.Extensions) != 1 || m.Registry.Extensions[0] != DenyAllExtension {
		return false
	}
	for _, d := range m.Registry.Deny {
		if d == "*" {
			return true
		}
	}
	return false
}

// PolicyEpoch is policy.json.
type PolicyEpoch struct {
	// Namespace is the namespace the epoch is for; the signature binds it
	// too.
	Namespace string `json:"namespace"`
	// PlatformPolicy is the digest of the platform's current policy for the
	// namespace.
	PlatformPolicy string `json:"platformPolicy"`
	// Previous, when set, is the digest this epoch replaced, still accepted
	// until Until: the context and epoch volumes update in either order, and
	// a context that has not caught up yet keeps serving for the grace
	// period only.
	Previous *PreviousPolicy `json:"previous,omitempty"`
}

// PreviousPolicy is a replaced platform-policy digest and when it stops
// being accepted.
type PreviousPolicy struct {
	PlatformPolicy string    `json:"platformPolicy"`
	Until          time.Time `json:"until"`
}

// Accepts reports whether a context carrying digest may be served at now.
func (e *PolicyEpoch) Accepts(digest string, now time.Time) bool {
	if digest == "" {
		return false
	}
	if digest == e.PlatformPolicy {
		return true
	}
	return e.Previous != nil && digest == e.Previous.PlatformPolicy && now.Before(e.Previous.Until)
}

// EpochHash is what the manager signs of an epoch: "sha256:" and the hex
// digest of policy.json's bytes.
func EpochHash(policyJSON []byte) string {
	sum := sha256.Sum256(policyJSON)
	return HashPrefix + hex.EncodeToString(sum[:])
}
