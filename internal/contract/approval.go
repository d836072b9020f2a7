package contract

// HookApproval is a BeforeToolCall hook's approval policy as published:
// its asks go to the cluster as Approval objects that a member of
// ApproverGroups decides (docs/hooks.md, "Approvals"). hostd honours it on
// an imposed hook only.
type HookApproval struct {
	ApproverGroups []string `json:"approverGroups"`
	// Route is Cluster (every ask) or Headless (only an agent without a
	// user to ask).
	Route         string `json:"route"`
	ExpirySeconds int32  `json:"expirySeconds"`
	WaitSeconds   int32  `json:"waitSeconds"`
}

// The approval routes.
const (
	ApprovalRouteCluster  = "Cluster"
	ApprovalRouteHeadless = "Headless"
)

// Clone is a deep copy; nil stays nil.
func (a *HookApproval) Clone() *HookApproval {
	if a == nil {
		return nil
	}
	c := *a
	c.ApproverGroups = append([]string(nil), a.ApproverGroups...)
	return &c
}
