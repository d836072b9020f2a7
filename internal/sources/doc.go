// Package sources fetches the pinned external content of skills (OCI
// artifacts by digest, git directories by commit) for the agent side,
// verifies it, and caches it on disk once per digest or commit. A fetched
// tree holds only SKILL.md in memory; its other files are read from the cache
// when used, checked against the hashes taken when they were verified.
package sources
