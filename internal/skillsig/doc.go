// Package skillsig signs skill artifacts with Sigstore bundles:
// `loadout push --sign-key` signs an artifact's manifest with a private key
// through the Sigstore project's Go libraries and attaches the bundle as an
// OCI referrer. Verification is internal/sigcheck's, with the standard
// library alone, so the lean sidecar verifies too; this package's tests
// hold sigcheck to what Sigstore's own verifier decides.
package skillsig
