// Package contract defines the published context's wire format: the keys and
// JSON shapes of the ConfigMap that agent pods mount, written by the resolution
// engine and read by hostd and the CLI.
package contract
