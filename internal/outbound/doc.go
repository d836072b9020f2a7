// Package outbound is the one HTTP client Loadout uses to call Services:
// extension manifests, webhook hooks and service-backed tools. It never
// follows redirects, bounds every call by its own deadline and response cap,
// verifies HTTPS against the caller's CA bundle, and signs calls the Standard
// Webhooks way when it is given a key file; Verifier is the receiving side.
package outbound
