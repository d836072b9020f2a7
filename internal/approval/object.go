package approval

import "time"

// The Approval resource as hostd writes and reads it; the API type is
// api/v1alpha1.Approval (this package keeps the sidecar free of
// apimachinery). Fields may be added, never renamed.
type (
	// Object is an Approval.
	Object struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   Meta   `json:"metadata"`
		Spec       Spec   `json:"spec"`
		Status     Status `json:"status,omitempty"`
	}
	// Meta is the object metadata hostd uses.
	Meta struct {
		Name            string            `json:"name,omitempty"`
		GenerateName    string            `json:"generateName,omitempty"`
		Namespace       string            `json:"namespace,omitempty"`
		UID             string            `json:"uid,omitempty"`
		ResourceVersion string            `json:"resourceVersion,omitempty"`
		Labels          map[string]string `json:"labels,omitempty"`
		OwnerReferences []OwnerReference  `json:"ownerReferences,omitempty"`
	}
	// OwnerReference names the object whose deletion deletes this one.
	OwnerReference struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		UID        string `json:"uid"`
	}
	// Spec is the request; admission refuses any change to it.
	Spec struct {
		Workspace      string    `json:"workspace"`
		Call           Call      `json:"call"`
		Hook           Hook      `json:"hook"`
		Requester      Requester `json:"requester"`
		ApproverGroups []string  `json:"approverGroups"`
		ExpiresAt      time.Time `json:"expiresAt"`
	}
	// Call is the exact call asked about.
	Call struct {
		Tool            string         `json:"tool"`
		Arguments       map[string]any `json:"arguments,omitempty"`
		ArgumentsDigest string         `json:"argumentsDigest"`
	}
	// Hook is the hook that asked.
	Hook struct {
		Extension string `json:"extension"`
		Name      string `json:"name"`
		Question  string `json:"question,omitempty"`
	}
	// Requester is hostd's pod and identity.
	Requester struct {
		Pod            string `json:"pod,omitempty"`
		ServiceAccount string `json:"serviceAccount"`
		User           string `json:"user"`
	}
	// Status is the decision.
	Status struct {
		Decision  string     `json:"decision,omitempty"`
		DecidedBy string     `json:"decidedBy,omitempty"`
		Reason    string     `json:"reason,omitempty"`
		DecidedAt *time.Time `json:"decidedAt,omitempty"`
	}
)

// The decisions an approver writes; Pending is the CRD's default.
const (
	Pending  = "Pending"
	Approved = "Approved"
	Denied   = "Denied"
)

// APIVersion and Kind of an Approval.
const (
	APIVersion = "loadout.dev/v1alpha1"
	Kind       = "Approval"
	resource   = "approvals"
)

// decided reports whether an approver wrote a decision.
func (o *Object) decided() bool {
	return o.Status.Decision == Approved || o.Status.Decision == Denied
}
