// Package e2e runs Loadout the way a user does: the `make demo` path end to
// end, the kustomize installation against a real API server, and the
// trust-label admission policy with impersonated users.
package e2e
