// Package outbound is the one HTTP client Loadout uses to call Services:
// extension manifests, webhook hooks and service-backed tools. It never
// follows redirects, bounds every call by its own deadline and response cap,
// verifies HTTPS against the caller's CA bundle, and signs request bodies
// with HMAC-SHA256 when it is given a key file.
package outbound
