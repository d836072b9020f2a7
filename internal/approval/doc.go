// Package approval is hostd's side of Approvals (docs/hooks.md,
// "Approvals"): it creates an Approval object for a call a hook asked about,
// as the pod's ServiceAccount, watches it until a member of the approver
// groups decides it, and honours a decision only for an Approval it created
// itself in this process, for the same call, once, before it expires.
//
// It talks to the API server over plain HTTPS with the pod's projected
// token: the sidecar links no Kubernetes client library.
package approval
