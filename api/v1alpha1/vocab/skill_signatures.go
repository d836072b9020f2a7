package vocab

// ConditionSkillSignatures reports what the Workspace's published context
// requires of its skills' signatures (docs/security.md, "Signed skills"):
// True with ReasonSignaturesRequired, the message naming each declaration
// and its key ids, or ReasonSignaturesNotRequired; False with
// ReasonUnsignableSkill when the context publishes a git skill while
// signatures are required, which every agent pod refuses. It does not
// decide Ready: the context is published, and the agents load every other
// skill.
const ConditionSkillSignatures ConditionType = "SkillSignatures"

// Reasons of ConditionSkillSignatures.
const (
	// ReasonSignaturesRequired: OCI skills load only when signed as
	// required; the message says by whom.
	ReasonSignaturesRequired ConditionReason = "SignaturesRequired"
	// ReasonSignaturesNotRequired: no declaration requires signatures.
	ReasonSignaturesNotRequired ConditionReason = "SignaturesNotRequired"
	// ReasonUnsignableSkill: a skill of the context comes from git, which
	// carries no signature, while signatures are required; agents refuse it.
	ReasonUnsignableSkill ConditionReason = "UnsignableSkill"
	// ReasonInvalidSkillSigners (Ready and Resolved, or the platform
	// policy's): a declaration's public key does not parse.
	ReasonInvalidSkillSigners ConditionReason = "InvalidSkillSigners"
)
