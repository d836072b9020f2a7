//go:build race

package shell

// raceEnabled: the race detector's instrumentation allocates beside the
// code it watches, so allocation bounds measured in such a build say
// nothing about the reader (make test runs with -race; the figures come
// from BenchmarkCommandsIn_PowerShellCorpus, docs/benchmarks.md).
const raceEnabled = true
