// Package agentcmd holds the commands that run beside an agent: hostd, the
// agents' command hooks and version. The loadout CLI and the lean
// loadout-hostd sidecar binary both serve them, so the flags, help and
// behaviour are the same in both; the sidecar binary links nothing else
// (no Kubernetes client, no resolution from manifests), which keeps its
// resident memory and start-up small (docs/benchmarks.md).
package agentcmd
