// Package exthost is the extension host: it loads extensions trust-first into
// a staged, all-or-nothing registry and runs their hooks around tool calls with
// the fail-closed semantics of docs/rules.md (extensions, hooks), shared by the controller and hostd.
//
// The package takes plain values and never talks to the Kubernetes API: the
// controller gathers Extension objects and the trust decision, hostd reads the
// published registry, and both hand them to the same Host.
package exthost
