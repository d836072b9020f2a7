// Package mcppin pins MCP tool definitions (a "rug pull"): the
// digest of a tool's definition as the manager serves it, the short
// difference between two definitions, and the drift rule that decides,
// for a fresh discovery, which definitions are served. It is pure: the
// manager's discovery and `loadout mcp pin` call it with what they listed.
package mcppin
