// Package sources fetches the pinned external content of skills (OCI
// artifacts by digest, git directories by commit) for the agent side,
// verifies it, and caches it on disk once per digest or commit.
package sources
