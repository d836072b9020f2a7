// Package sourcecache is the network-free half of external skill sources:
// it reads what a Filler put in the cache directory (OCI manifests, layers
// and signature bundles by digest; git trees with the git objects that tie
// them to their commit) and verifies it against the pin and the signer
// requirements, every time, whoever wrote it. The Filler is internal/sources
// in process (the full CLI, the manager's tools) or, in the sidecar, a
// helper process (internal/fetchhelper, cmd/loadout-fetch): the sidecar then
// links no registry or git client and trusts nothing the helper says about
// the bytes it wrote, only the bytes.
package sourcecache
