// Package hostd is the agent-side extension host: a localhost HTTP API that
// agents in any language call around each tool call, serving the context the
// controller published and running its hooks with the controller's runtime.
//
// The context is loaded whole from a mounted ConfigMap directory and swapped in
// atomically: a request sees one complete context, never a half-loaded one,
// and a bad update keeps the last good context serving.
package hostd
