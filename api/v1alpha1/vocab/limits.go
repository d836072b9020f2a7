package vocab

// Limits of the Loadout objects, declared once. Kubebuilder markers cannot
// name a constant, so the markers in the *_types.go files repeat these
// numbers; TestLimits_MatchTheGeneratedCRDSchemas reads
// config/crd/bases and fails when a marker and its constant disagree. The
// resolver (internal/resources) and `loadout import` check the same limits
// before admission does.
const (
	// MaxLogicalNameLength bounds a skill, template or extension name (rule R-SK-1).
	MaxLogicalNameLength = 64
	// MaxDescriptionLength bounds a description, in characters.
	MaxDescriptionLength = 1024
	// MaxSkillTextLength bounds a skill's body and each file's content, in bytes.
	MaxSkillTextLength = 262144
	// MaxSkillFiles bounds the files of a skill.
	MaxSkillFiles = 64
	// MaxSkillFilePathLength bounds a skill file's path.
	MaxSkillFilePathLength = 255
	// MaxLicenseLength bounds a skill's license.
	MaxLicenseLength = 256
	// MaxCompatibilityLength bounds a skill's compatibility, in characters.
	MaxCompatibilityLength = 500
	// MaxMetadataEntries bounds a skill's metadata map.
	MaxMetadataEntries = 64
	// MaxAllowedTools bounds a skill's allowedTools.
	MaxAllowedTools = 64
	// MaxAllowedToolLength bounds one allowedTools entry, in characters.
	MaxAllowedToolLength = 128

	// DefaultHookTimeoutSeconds and MaxHookTimeoutSeconds bound a hook's
	// timeoutSeconds (minimum 1).
	DefaultHookTimeoutSeconds = 10
	MaxHookTimeoutSeconds     = 30
	// DefaultToolTimeoutSeconds and MaxToolTimeoutSeconds bound a runnable
	// tool's implementation.timeoutSeconds (minimum 1).
	DefaultToolTimeoutSeconds = 30
	MaxToolTimeoutSeconds     = 300
)

// Defaults and hard limits of a Workspace's published context.
const (
	// DefaultMaxContextBytes is the context budget when spec.budget is unset.
	DefaultMaxContextBytes = 512 * 1024
	// MaxContextBytesLimit is the hard cap, well under the 1 MiB ConfigMap limit.
	MaxContextBytesLimit = 900 * 1024
	// MaxStatusListItems bounds every list in WorkspaceStatus; totals sit beside them.
	MaxStatusListItems = 256
)
