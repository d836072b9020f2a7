// Package toolauth is what a tool Service (or webhook hook) uses to know a
// call came through a bound agent pod's hostd: hostd presents a projected
// ServiceAccount token with the Loadout audience (Audience) that only its
// container mounts (the agent-pod admission policy), and the Service checks it
// with a TokenReview and learns the caller's namespace, pod, ServiceAccount
// and Workspace (docs/hostd.md, "Knowing a call came through hostd").
//
// No signing secret sits in the tenant's pod: the token is the kubelet's,
// lives at most ten minutes, is bound to the pod (deleting the pod revokes
// it) and proves nothing to the API server itself (its audience is not the
// API server's).
package toolauth
