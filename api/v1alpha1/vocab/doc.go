// Package vocab is the vocabulary of the loadout.dev/v1alpha1 API that code
// beside an agent shares with the controller: hook events, extension load
// states, condition types and reasons, well-known labels, trust levels and
// the objects' limits. It imports nothing, so hostd and the agents' command
// hooks use the API's own names without linking Kubernetes' API machinery
// (which would double the sidecar's memory; docs/benchmarks.md). The types
// of package v1alpha1 use these types for their fields.
package vocab
