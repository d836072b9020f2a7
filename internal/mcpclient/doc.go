// Package mcpclient speaks to an existing MCP server (streamable HTTP) with
// the MCP Go SDK's client: the manager lists its tools (Discover) and hostd
// calls them (Upstream). Every HTTP exchange goes through an outbound.Doer,
// so the calls get outbound's rules (no redirects, a deadline, a capped
// answer, the service token) and each answer's JSON values are counted
// before the SDK decodes it.
package mcpclient
