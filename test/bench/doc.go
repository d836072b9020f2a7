// Package bench is the scale harness of the performance targets in docs/benchmarks.md: it runs
// the manager in process against its own envtest control plane and measures
// propagation, write economy, a change storm, memory and resolution against
// side-by-side baselines (see docs/benchmarks.md and cmd/loadout-bench).
package bench
