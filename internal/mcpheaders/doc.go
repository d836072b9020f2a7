// Package mcpheaders carries an MCP server's request headers (an API key in
// a platform Secret) to the two callers allowed to send them: the manager's
// own discovery, and hostd, which fetches them from the manager's endpoint
// with a pod-bound token only its container holds. The headers never enter
// the published context, a status, an Event or a log line: errors name
// header names and Secrets, never values (docs/security.md).
package mcpheaders
