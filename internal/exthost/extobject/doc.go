// Package extobject loads Extension objects into an exthost.Host: an
// object's spec (or the manifest its Service serves) compiled into tools and
// hooks with exthost's one hook compiler, and the checks behind an
// Extension's Valid condition. It is the controller's side of extension
// loading; hostd rebuilds hooks from the published registry
// (exthost.NewHostFromRegistry) and never links the API types, which keeps
// Kubernetes' API machinery out of the agent pod (docs/benchmarks.md).
package extobject
