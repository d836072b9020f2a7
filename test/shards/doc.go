// Package shards runs sharded managers against one envtest control plane: the envtest tests of ownership, Lease handover, coverage and adoption, and the processes of the scale harness.
package shards
