// Package sources fetches the pinned external content of skills (OCI
// artifacts by digest, git directories by commit) from registries and git
// hosts into the cache on disk, once per digest or commit: the
// sourcecache.Filler of the full CLI (in process) and of the sidecar's
// helper, loadout-fetch. Its Fetcher embeds the sourcecache.Fetcher that
// reads and verifies what it filled, so a fetched tree holds only SKILL.md
// in memory and its other files are read from the cache when used, checked
// against the hashes taken when they were verified.
package sources
