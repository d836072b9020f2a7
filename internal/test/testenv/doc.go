// Package testenv starts the envtest control plane with Loadout's CRDs for
// integration tests, and explains how to get the control plane when it is missing.
package testenv
