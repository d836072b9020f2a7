// Package contextsig signs and verifies published contexts.
//
// The manager signs every context it publishes with each Ed25519 key of its
// key set, over the context hash and the Workspace's namespace, name and UID.
// The signature document is the ConfigMap key contract.KeySignature; it is not
// part of the context hash (the hash is what is signed). hostd loads a context
// only when one signature verifies against a public key of its trust anchor
// and names the Workspace hostd serves, so a ConfigMap that a tenant forged,
// or another Workspace's context, is refused however it got mounted.
//
// Rotation without an outage is a key set: every context carries one
// signature per key, so an agent pod whose trust anchor holds only the old
// key and one whose anchor holds only the new key both verify while both
// keys are in the set (docs/security.md).
package contextsig
