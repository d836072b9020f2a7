// Package skillsig signs and verifies skill artifacts with Sigstore
// bundles (issue 47): `loadout push --sign-key` signs an artifact's
// manifest with a private key and attaches the bundle as an OCI referrer;
// the agent side's fetch (internal/sources) verifies it offline against
// the public keys the platform trusts, before any file of the skill is
// used. No transparency log or timestamp authority is contacted: the
// trust is the key's.
package skillsig
