package vocab

// ConditionPlatformPolicy reports whether the platform's policy reaches a
// Workspace: True when every platform namespace carries a valid
// loadout.dev/trust label, False (ReasonPlatformNamespaceUnlabelled) when one
// is missing or unlabelled, so nothing of it (hooks, denied tools, prompt
// guides) applies. It does not decide Ready: the context is still published,
// but the Workspace says it has no platform policy from that namespace.
const ConditionPlatformPolicy ConditionType = "PlatformPolicy"

// Reasons of ConditionPlatformPolicy.
const (
	// ReasonPlatformNamespacesTrusted: every platform namespace carries a
	// valid trust label.
	ReasonPlatformNamespacesTrusted ConditionReason = "PlatformNamespacesTrusted"
	// ReasonPlatformNamespaceUnlabelled: a platform namespace does not exist
	// or has no valid trust label; the message names it. Also the reason of
	// the Warning Event the manager records on such a Namespace.
	ReasonPlatformNamespaceUnlabelled ConditionReason = "PlatformNamespaceUnlabelled"
)
