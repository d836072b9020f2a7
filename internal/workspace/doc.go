// Package workspace is the one Workspace pipeline: what a Workspace reads
// (Reads, also behind the controller's field indexes), gathering it under the
// trust policy, loading extensions, resolving and rendering (Resolve), and
// the shape of the published ConfigMap (ContextConfigMap). The controller
// (reading its cache) and `loadout preview` (reading manifests) both call it,
// so a preview in CI decides exactly what the cluster will publish.
package workspace
