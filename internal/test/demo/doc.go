// Package demo runs Loadout end to end on a local control plane it owns: the
// envtest kube-apiserver and etcd, the manager binary, the samples, and the
// hostd sidecar fed from the published ConfigMap, as `make demo` shows it.
package demo
