// Package workspace turns one Workspace and the objects it may see into the
// resolution input and the tool registry. The controller (reading its cache)
// and the CLI (reading manifests) both call it, so a preview in CI decides
// exactly what the cluster will publish.
package workspace
