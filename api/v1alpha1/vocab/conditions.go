package vocab

// ConditionType is the type of a metav1.Condition Loadout sets. The
// constants below are the only ones; conditions of other types on our
// objects were set by someone else.
type ConditionType string

// ConditionReason is the reason of a metav1.Condition Loadout sets.
type ConditionReason string

// Condition types. Every Loadout object reports its state through
// metav1.Conditions of these types; each type's comment lists its reasons.
const (
	// ConditionReady summarises a Workspace: True when its context is published
	// from the current generation. Reasons: ReasonReconciled, ReasonRetrying or
	// ReasonPublishFailed (while Reconciling), or the reason of the first
	// failing condition below (while Stalled).
	ConditionReady ConditionType = "Ready"

	// ConditionReconciling is True, as kstatus defines it, while the controller
	// has not finished the current generation: a pass failed transiently and is
	// retried with backoff. It is removed when a pass completes. Reasons:
	// ReasonRetrying, ReasonPublishFailed.
	ConditionReconciling ConditionType = "Reconciling"

	// ConditionStalled is True, as kstatus defines it, when the controller
	// cannot make progress until an input changes: a Workspace's input is
	// invalid and the last good context stays published, or a Skill, Template
	// or Extension is not Valid. It is removed when that ends. Reasons: on a
	// Workspace, those of ConditionCatalogResolved, ConditionExtensionsLoaded
	// and ConditionContextPublished that are not success reasons (for example
	// ReasonDuplicateName, ReasonNotOwned); on the other kinds, ReasonInvalid.
	ConditionStalled ConditionType = "Stalled"

	// ConditionCatalogResolved reports whether the Workspace's roots resolved into
	// one catalog. Reasons: ReasonResolved, ReasonDuplicateName,
	// ReasonRootNotPermitted, ReasonInstructionsNotFound, ReasonActivationFailed,
	// ReasonInvalidResource.
	ConditionCatalogResolved ConditionType = "CatalogResolved"

	// ConditionExtensionsLoaded reports whether every extension visible to the
	// Workspace was either loaded or deliberately skipped. Reasons: ReasonLoaded,
	// ReasonExtensionRejected.
	ConditionExtensionsLoaded ConditionType = "ExtensionsLoaded"

	// ConditionContextPublished reports whether the context ConfigMap holds the
	// current resolution. Reasons: ReasonPublished, ReasonContextTooLarge,
	// ReasonNotOwned, ReasonConfigMapNameConflict, ReasonPublishFailed, or the reason of the invalid input
	// (for example ReasonDuplicateName or ReasonExtensionRejected) while the
	// last good ConfigMap stays published.
	ConditionContextPublished ConditionType = "ContextPublished"

	// ConditionValid reports whether a Skill, Template or Extension passed the
	// controller's checks beyond admission (for example CEL compilation).
	// Reasons: ReasonValid, ReasonInvalid.
	ConditionValid ConditionType = "Valid"
)

// Condition reasons.
const (
	// ReasonReconciled: every condition of the Workspace is True.
	ReasonReconciled ConditionReason = "Reconciled"
	// ReasonResolved: the catalog was resolved from all roots.
	ReasonResolved ConditionReason = "Resolved"
	// ReasonDuplicateName: two objects of one kind share a logical name inside one
	// root; order cannot decide between them (rule R-CAT-2).
	ReasonDuplicateName ConditionReason = "DuplicateName"
	// ReasonRootNotPermitted: a root names a namespace that is neither the
	// Workspace's own nor a platform namespace.
	ReasonRootNotPermitted ConditionReason = "RootNotPermitted"
	// ReasonInstructionsNotFound: an instructions ConfigMap or key is missing.
	ReasonInstructionsNotFound ConditionReason = "InstructionsNotFound"
	// ReasonActivationFailed: an activated skill or file could not be resolved.
	ReasonActivationFailed ConditionReason = "ActivationFailed"
	// ReasonInvalidResource: a resource in a root failed validation.
	ReasonInvalidResource ConditionReason = "InvalidResource"
	// ReasonLoaded: every trusted extension loaded.
	ReasonLoaded ConditionReason = "Loaded"
	// ReasonExtensionRejected: at least one trusted extension failed to load.
	ReasonExtensionRejected ConditionReason = "ExtensionRejected"
	// ReasonPublished: the ConfigMap holds the current context.
	ReasonPublished ConditionReason = "Published"
	// ReasonContextTooLarge: the rendered context exceeds the budget; nothing was
	// written and the last good ConfigMap stays.
	ReasonContextTooLarge ConditionReason = "ContextTooLarge"
	// ReasonNotOwned: a ConfigMap of the output name exists and is not controlled
	// by this Workspace; it is left untouched.
	ReasonNotOwned ConditionReason = "NotOwned"
	// ReasonConfigMapNameConflict: another Workspace of the namespace, created
	// earlier, publishes to the same ConfigMap name; the older keeps it.
	ReasonConfigMapNameConflict ConditionReason = "ConfigMapNameConflict"
	// ReasonContentHeld: the Workspace's input is invalid; the ConfigMap holds
	// its last good content under the platform's current policy
	// (status.heldContent says which content and why).
	ReasonContentHeld ConditionReason = "ContentHeld"
	// ReasonPolicyOnly: the Workspace's input is invalid and no good content
	// of it could be kept; the ConfigMap holds the platform's current policy
	// alone.
	ReasonPolicyOnly ConditionReason = "PolicyOnly"
	// ReasonWorkspaceDeleting: the Workspace is being deleted; the ConfigMap
	// holds a context that denies every tool call and prompt.
	ReasonWorkspaceDeleting ConditionReason = "WorkspaceDeleting"
	// ReasonPublishFailed: writing the ConfigMap failed; it will be retried.
	ReasonPublishFailed ConditionReason = "PublishFailed"
	// ReasonRetrying: a pass failed transiently (a read or the API server); it
	// is retried with backoff and the last completed pass's conditions stay.
	ReasonRetrying ConditionReason = "Retrying"
	// ReasonValid: the object passed every check.
	ReasonValid ConditionReason = "Valid"
	// ReasonInvalid: the object failed a check; the message names the field.
	ReasonInvalid ConditionReason = "Invalid"
)

// Well-known labels and annotations.
const (
	// TrustLabel on a Namespace sets the trust level of its project resources.
	// Only an administrator group may set or change it (config/policy).
	TrustLabel = "loadout.dev/trust"

	// ContextHashAnnotation on a published ConfigMap carries the sha256 of its data,
	// so agent Deployments can roll when it changes.
	ContextHashAnnotation = "loadout.dev/context-hash"

	// ContextSignersAnnotation on a published ConfigMap lists the ids of the
	// keys that signed it (comma-separated), so a changed key set re-signs
	// every context and an unchanged one writes nothing.
	ContextSignersAnnotation = "loadout.dev/context-signers"

	// WorkspaceLabel on a published ConfigMap names the Workspace that owns it.
	WorkspaceLabel = "loadout.dev/workspace"

	// InstructionsLabel with the value "true" opts a platform ConfigMap in to
	// being read as instructions by tenants' Workspaces. Without it a platform
	// ConfigMap is treated as missing (InstructionsNotFound), so tenants can
	// neither read it nor learn that it exists. A Workspace's own namespace
	// needs no label.
	InstructionsLabel = "loadout.dev/instructions"
)

// TrustLevel is the value of the loadout.dev/trust label on a project namespace.
type TrustLevel string

const (
	// TrustUntrusted ignores every project resource of the namespace.
	TrustUntrusted TrustLevel = "untrusted"
	// TrustRestricted loads skills, templates and instructions but no extension.
	TrustRestricted TrustLevel = "restricted"
	// TrustTrusted loads everything, extensions included.
	TrustTrusted TrustLevel = "trusted"
)
