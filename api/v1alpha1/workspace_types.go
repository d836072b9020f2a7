package v1alpha1

import (
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkspaceKind is the kind of a Workspace, as owner references name it.
const WorkspaceKind = "Workspace"

// WorkspaceSpec says which layers an agent's context is resolved from, which
// skills are always active and which tools the agent may use.
//
// +kubebuilder:validation:XValidation:rule="!has(self.roots) || self.roots.all(r, self.roots.exists_one(s, s.name == r.name))",message="root names must be unique"
// +kubebuilder:validation:XValidation:rule="!has(self.activate) || self.activate.all(a, self.activate.exists_one(b, b.skill == a.skill))",message="a skill may be activated only once"
// +kubebuilder:validation:XValidation:rule="has(self.output) && has(self.output.configMapName) ? (has(oldSelf.output) && has(oldSelf.output.configMapName) && oldSelf.output.configMapName == self.output.configMapName) : !(has(oldSelf.output) && has(oldSelf.output.configMapName))",message="spec.output.configMapName is immutable: agents admitted with the old name would keep a context that no longer updates; re-create the Workspace instead"
type WorkspaceSpec struct {
	// roots are the ordered layers resources are resolved from; on a name
	// collision the root listed first wins. Default: the Workspace's own
	// namespace, then the platform namespace. Only the own namespace and
	// platform namespaces are permitted.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Roots []WorkspaceRoot `json:"roots,omitempty"`

	// instructions are the project rules placed first in the system prompt, in order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Instructions []InstructionSource `json:"instructions,omitempty"`

	// activate lists the skills always active for this Workspace, with the extra
	// files to include.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Activate []SkillActivation `json:"activate,omitempty"`

	// tools sets the agent's built-in tools and the tools denied to it.
	// +optional
	Tools *WorkspaceTools `json:"tools,omitempty"`

	// sandbox narrows the sandbox the platform imposes (docs/security.md,
	// "Sandbox"): it intersects with it and can never widen it. With no
	// platform sandbox it is the Workspace's own.
	// +optional
	Sandbox *Sandbox `json:"sandbox,omitempty"`

	// skillSigners adds a requirement on who must have signed the
	// Workspace's OCI skills (docs/security.md, "Signed skills"): every
	// declaration, the platform's and this, must be met, so it can narrow
	// the platform's trust and never widen it.
	// +optional
	SkillSigners *SkillSigners `json:"skillSigners,omitempty"`

	// output says where the context is published.
	// +optional
	Output *WorkspaceOutput `json:"output,omitempty"`

	// budget bounds the published context.
	// +optional
	Budget *WorkspaceBudget `json:"budget,omitempty"`
}

// WorkspaceRoot is one layer of resources.
type WorkspaceRoot struct {
	// name identifies the root in provenance and status.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// namespace the root reads. Empty means the Workspace's own namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`

	// selector limits the root to objects with matching labels.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// InstructionSource is inline text or a key of a ConfigMap. Exactly one is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.inline) != has(self.configMapKeyRef)",message="exactly one of inline or configMapKeyRef must be set"
type InstructionSource struct {
	// inline instruction text.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=262144
	Inline string `json:"inline,omitempty"`

	// configMapKeyRef reads the instructions from a ConfigMap key in the
	// Workspace's own namespace or a platform namespace.
	// +optional
	ConfigMapKeyRef *ConfigMapKeyReference `json:"configMapKeyRef,omitempty"`
}

// ConfigMapKeyReference names a key of a ConfigMap.
type ConfigMapKeyReference struct {
	// namespace of the ConfigMap. Empty means the Workspace's own namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`

	// name of the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Name string `json:"name"`

	// key in the ConfigMap's data.
	// +optional
	// +kubebuilder:default="AGENTS.md"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// SkillActivation makes a skill always active, with some of its files.
type SkillActivation struct {
	// skill is the logical name of the skill, looked up in the catalog.
	// +required
	Skill LogicalName `json:"skill"`

	// files of the skill to include, as requested paths.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=255
	Files []string `json:"files,omitempty"`
}

// WorkspaceTools is the tool permission policy of a Workspace.
type WorkspaceTools struct {
	// builtin names the agent's own tools, so extensions cannot take their names.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	Builtin []ToolName `json:"builtin,omitempty"`

	// deny lists tools the agent may not call, built-in or from an extension:
	// names or tool classes (shell, read, write, edit, search, web), compared
	// case-insensitively (docs/agents.md).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=128
	Deny []ToolName `json:"deny,omitempty"`
}

// WorkspaceOutput says where the context is published.
type WorkspaceOutput struct {
	// configMapName is the published ConfigMap. Default: <workspace>-context.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	ConfigMapName string `json:"configMapName,omitempty"`
}

// WorkspaceBudget bounds the published context.
type WorkspaceBudget struct {
	// maxContextBytes is the most data the ConfigMap may hold. Over it, the
	// Workspace reports ContextTooLarge and keeps its last good context.
	// +optional
	// +kubebuilder:default=524288
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=921600
	MaxContextBytes int64 `json:"maxContextBytes,omitempty"`
}

// WorkspaceStatus is the resolved state of a Workspace.
type WorkspaceStatus struct {
	// observedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, Reconciling, Stalled, CatalogResolved, ExtensionsLoaded,
	// ContextPublished, PlatformPolicy.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// context is the published ConfigMap.
	// +optional
	Context *ContextStatus `json:"context,omitempty"`

	// catalog counts what was resolved.
	// +optional
	Catalog *CatalogCounts `json:"catalog,omitempty"`

	// winners are the resolved resources with their origin, sorted by kind and name.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Winners []CatalogEntry `json:"winners,omitempty"`

	// shadowed are the resources that lost to a same-named one in an earlier root.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Shadowed []ShadowedEntry `json:"shadowed,omitempty"`

	// extensions are the extensions visible to the Workspace and what became of them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Extensions []ExtensionState `json:"extensions,omitempty"`

	// tools is the tool registry: every tool the agent may call.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Tools []ToolEntry `json:"tools,omitempty"`

	// sandbox is the effective sandbox the published context carries, the
	// intersection of every declaration: what every agent of the Workspace
	// runs under. Unset, agents run unsandboxed.
	// +optional
	Sandbox *Sandbox `json:"sandbox,omitempty"`

	// skillSigners are the signer requirements the published context
	// carries: an agent pod loads an OCI skill only if one of its Sigstore
	// bundles meets each, and no git skill while any is set. The
	// SkillSignatures condition summarises them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	SkillSigners []SkillSignerRequirement `json:"skillSigners,omitempty"`

	// heldContent is set while the Workspace's own input is invalid. The
	// platform's policy is never held back: the published context carries
	// the platform's current policy with the tenant content of the last good
	// context (mode Content), or the policy alone (mode PolicyOnly).
	// +optional
	HeldContent *HeldContent `json:"heldContent,omitempty"`
}

// HeldContentMode says what a held context keeps of the tenant's content.
// +kubebuilder:validation:Enum=Content;PolicyOnly
type HeldContentMode string

const (
	// HeldContentContent keeps the last good context's content.
	HeldContentContent HeldContentMode = "Content"
	// HeldContentPolicyOnly keeps none: there was no good content to keep,
	// or it does not fit under the current policy and budget.
	HeldContentPolicyOnly HeldContentMode = "PolicyOnly"
)

// HeldContent describes tenant content held back while the Workspace's input
// is invalid.
type HeldContent struct {
	// mode is what the published context keeps of the tenant's content.
	Mode HeldContentMode `json:"mode"`
	// from is the hash of the last good context whose content is kept
	// (mode Content).
	// +optional
	From string `json:"from,omitempty"`
	// reason is why the current input was not published, a condition reason
	// such as DuplicateName or ContextTooLarge.
	Reason string `json:"reason"`
	// message says what to fix.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
}

// ContextStatus identifies the published context.
type ContextStatus struct {
	// configMapName is the ConfigMap holding the context.
	ConfigMapName string `json:"configMapName"`
	// hash is "sha256:" and the hex digest of the ConfigMap data.
	// +optional
	Hash string `json:"hash,omitempty"`
	// bytes is the size of the ConfigMap data.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
}

// CatalogCounts counts the resolved catalog. The lists in the status are
// bounded; these totals are not.
type CatalogCounts struct {
	// skills that won.
	Skills int32 `json:"skills"`
	// templates that won.
	Templates int32 `json:"templates"`
	// instructions sources used.
	Instructions int32 `json:"instructions"`
	// activeSkills whose bodies are in the context.
	ActiveSkills int32 `json:"activeSkills"`
	// shadowed resources.
	Shadowed int32 `json:"shadowed"`
	// extensions visible to the Workspace.
	Extensions int32 `json:"extensions"`
	// tools in the registry.
	Tools int32 `json:"tools"`
}

// CatalogEntry is a resolved resource and where it came from.
type CatalogEntry struct {
	// kind is skill or template.
	Kind string `json:"kind"`
	// name is the logical name.
	Name string `json:"name"`
	// origin is root/namespace/object of the winner.
	Origin string `json:"origin"`
}

// ShadowedEntry is a resource that lost to a same-named one.
type ShadowedEntry struct {
	// kind is skill or template.
	Kind string `json:"kind"`
	// name is the logical name.
	Name string `json:"name"`
	// origin is root/namespace/object of the loser.
	Origin string `json:"origin"`
	// shadowedBy is the origin of the winner.
	ShadowedBy string `json:"shadowedBy"`
}

// ExtensionState is one extension's outcome for a Workspace.
type ExtensionState struct {
	// name is the extension id.
	Name string `json:"name"`
	// namespace of the Extension object.
	Namespace string `json:"namespace"`
	// state is Loaded, SkippedUntrusted or Rejected.
	State vocab.ExtensionLoadState `json:"state"`
	// reason is a CamelCase cause for a state other than Loaded.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message explains the state.
	// +optional
	Message string `json:"message,omitempty"`
	// tools the extension registered.
	// +optional
	// +listType=atomic
	Tools []string `json:"tools,omitempty"`
	// enforced is true for a platform extension imposed on this Workspace by
	// its namespace selector: no field of the Workspace can remove it.
	// +optional
	Enforced bool `json:"enforced,omitempty"`
	// deniedTools the extension denies.
	// +optional
	// +listType=atomic
	DeniedTools []string `json:"deniedTools,omitempty"`
}

// ToolEntry is one tool of the registry.
type ToolEntry struct {
	// name the agent calls the tool by.
	Name string `json:"name"`
	// extension that registered the tool; empty for a built-in tool.
	// +optional
	Extension string `json:"extension,omitempty"`
	// builtin is true for the agent's own tools.
	// +optional
	Builtin bool `json:"builtin,omitempty"`
	// description of the tool.
	// +optional
	Description string `json:"description,omitempty"`
	// readOnly marks a tool that changes nothing.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`
	// runnable is true for a tool with an implementation: hostd runs it
	// (POST /v1/tools/{name}, MCP). Other tools are declarations the agent runs.
	// +optional
	Runnable bool `json:"runnable,omitempty"`
}

// Workspace resolves an agent's context from ordered layers and publishes it,
// with the tool registry, as a ConfigMap.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ws,categories=loadout
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Skills",type=integer,JSONPath=`.status.catalog.skills`
// +kubebuilder:printcolumn:name="Tools",type=integer,JSONPath=`.status.catalog.tools`
// +kubebuilder:printcolumn:name="Context hash",type=string,JSONPath=`.status.context.hash`
// +kubebuilder:printcolumn:name="Held",type=string,JSONPath=`.status.heldContent.mode`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Workspace struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the Workspace.
	// +optional
	Spec WorkspaceSpec `json:"spec,omitempty"`

	// status is written by the controller.
	// +optional
	Status WorkspaceStatus `json:"status,omitempty"`
}

// ConfigMapName returns the name of the published ConfigMap.
func (w *Workspace) ConfigMapName() string {
	if w.Spec.Output != nil && w.Spec.Output.ConfigMapName != "" {
		return w.Spec.Output.ConfigMapName
	}
	return w.Name + "-context"
}

// MaxContextBytes returns the context budget, capped at MaxContextBytesLimit.
func (w *Workspace) MaxContextBytes() int64 {
	if w.Spec.Budget == nil || w.Spec.Budget.MaxContextBytes <= 0 {
		return vocab.DefaultMaxContextBytes
	}
	return min(w.Spec.Budget.MaxContextBytes, vocab.MaxContextBytesLimit)
}

// +kubebuilder:object:root=true

// WorkspaceList is a list of Workspaces.
type WorkspaceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workspace `json:"items"`
}
