package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// HookApproval sends a hook's ask to people in the cluster instead of (or
// when there is none, as well as) the agent's own user: hostd creates an
// Approval and waits for a member of approverGroups to decide it
// (docs/hooks.md, "Approvals"). Only an imposed (platform) extension's
// approval is honoured; a tenant's hook that asks still asks the agent.
type HookApproval struct {
	// approverGroups are the groups (as the API server authenticates them)
	// whose members may decide the hook's Approvals. The requester's own
	// identity never may.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	ApproverGroups []string `json:"approverGroups"`

	// route says when the ask goes to the cluster: Cluster always; Headless
	// only when the agent has no user to ask (Codex, a headless Pi or
	// Claude Code), its ask otherwise going to the agent's user.
	// +optional
	// +kubebuilder:default=Headless
	Route ApprovalRoute `json:"route,omitempty"`

	// expirySeconds is how long an Approval may be decided and used after it
	// is created.
	// +optional
	// +kubebuilder:default=900
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=86400
	ExpirySeconds int32 `json:"expirySeconds,omitempty"`

	// waitSeconds bounds how long one call waits for a decision; a call
	// still pending then is blocked naming the Approval, and the same call
	// asked again waits on the same Approval until it expires. Keep it under
	// the agent's own wait for a hook (Pi 35 s, Claude Code's command hook
	// 50 s).
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	WaitSeconds int32 `json:"waitSeconds,omitempty"`
}

// ApprovalRoute says when a hook's ask goes to the cluster.
// +kubebuilder:validation:Enum=Cluster;Headless
type ApprovalRoute string

// The approval routes.
const (
	ApprovalRouteCluster  ApprovalRoute = "Cluster"
	ApprovalRouteHeadless ApprovalRoute = "Headless"
)

// ApprovalSpec is the request: written once by the requesting hostd, never
// changed (admission refuses any change).
type ApprovalSpec struct {
	// workspace is the Workspace whose agent made the call.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Workspace string `json:"workspace"`

	// call is the exact call asked about, as it would run.
	// +required
	Call ApprovalCall `json:"call"`

	// hook is the hook that asked, and its question.
	// +required
	Hook ApprovalHook `json:"hook"`

	// requester is the pod and ServiceAccount of the hostd that asked;
	// admission checks both against the creating identity.
	// +required
	Requester ApprovalRequester `json:"requester"`

	// approverGroups are the groups whose members may decide.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=256
	ApproverGroups []string `json:"approverGroups"`

	// expiresAt is when the Approval stops counting, decided or not.
	// +required
	ExpiresAt metav1.Time `json:"expiresAt"`
}

// ApprovalCall is a tool call.
type ApprovalCall struct {
	// tool is the tool's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Tool string `json:"tool"`

	// arguments are the call's arguments.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Arguments *runtime.RawExtension `json:"arguments,omitempty"`

	// argumentsDigest is "sha256:" and the hex SHA-256 of the arguments as
	// JSON with sorted keys: what hostd compares before it honours a
	// decision.
	// +required
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	ArgumentsDigest string `json:"argumentsDigest"`
}

// ApprovalHook names the hook that asked.
type ApprovalHook struct {
	// extension is the hook's extension id.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Extension string `json:"extension"`
	// name is the hook's name.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`
	// question is the hook's message.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Question string `json:"question,omitempty"`
}

// ApprovalRequester is who asked.
type ApprovalRequester struct {
	// pod is the agent pod's name.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Pod string `json:"pod,omitempty"`
	// serviceAccount is the pod's ServiceAccount's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	ServiceAccount string `json:"serviceAccount"`
	// user is the identity that created the Approval
	// (system:serviceaccount:NAMESPACE:NAME); it may not decide it.
	// +required
	// +kubebuilder:validation:MaxLength=512
	User string `json:"user"`
}

// ApprovalDecision is an Approval's state.
// +kubebuilder:validation:Enum=Pending;Approved;Denied
type ApprovalDecision string

// The decisions.
const (
	ApprovalPending  ApprovalDecision = "Pending"
	ApprovalApproved ApprovalDecision = "Approved"
	ApprovalDenied   ApprovalDecision = "Denied"
)

// ApprovalStatus is the decision, written once through the status
// subresource by a member of the approver groups.
type ApprovalStatus struct {
	// decision is Pending until an approver writes Approved or Denied.
	// +optional
	// +kubebuilder:default=Pending
	Decision ApprovalDecision `json:"decision,omitempty"`
	// decidedBy is the approver's username; admission checks it is the
	// identity writing the decision.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	DecidedBy string `json:"decidedBy,omitempty"`
	// reason says why, for a denial above all.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reason string `json:"reason,omitempty"`
	// decidedAt is when the decision was written.
	// +optional
	DecidedAt *metav1.Time `json:"decidedAt,omitempty"`
}

// Approval is one tool call a hook asked about, waiting for a person of the
// approver groups its hook names (docs/hooks.md, "Approvals").
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=apv,categories=loadout
// +kubebuilder:printcolumn:name="Decision",type=string,JSONPath=`.status.decision`
// +kubebuilder:printcolumn:name="Workspace",type=string,JSONPath=`.spec.workspace`
// +kubebuilder:printcolumn:name="Tool",type=string,JSONPath=`.spec.call.tool`
// +kubebuilder:printcolumn:name="Hook",type=string,JSONPath=`.spec.hook.name`
// +kubebuilder:printcolumn:name="Requester",type=string,JSONPath=`.spec.requester.pod`
// +kubebuilder:printcolumn:name="Expires",type=string,JSONPath=`.spec.expiresAt`
// +kubebuilder:printcolumn:name="Question",type=string,JSONPath=`.spec.hook.question`,priority=1
// +kubebuilder:printcolumn:name="Decided By",type=string,JSONPath=`.status.decidedBy`,priority=1
type Approval struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the request.
	// +required
	Spec ApprovalSpec `json:"spec"`

	// status is the decision.
	// +optional
	// +kubebuilder:default={}
	Status ApprovalStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ApprovalList is a list of Approvals.
type ApprovalList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Approval `json:"items"`
}
