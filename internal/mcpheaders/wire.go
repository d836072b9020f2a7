package mcpheaders

// Audience is the audience of the token hostd presents to the manager's
// headers endpoint. It is not toolauth.Audience: hostd sends that token to
// every tool Service (a tenant's too), which could replay it; this one goes
// to the manager only, only hostd's container mounts it, and only a node
// (the kubelet) may request one (admission policy loadout-hostd-tokens).
const Audience = "loadout.dev/mcp-headers"

// Path is where the manager serves the headers.
const Path = "/v1/mcp-headers"

// DefaultPort is the port the manager serves the endpoint on, and its
// Service's.
const DefaultPort = 8444

// Request asks for the headers of one Extension's MCP server.
type Request struct {
	// Extension is "namespace/name" of the Extension, as the context's tool
	// names it (contract.ToolMCP.HeadersFrom).
	Extension string `json:"extension"`
}

// Answer is the headers and the endpoint they are for: hostd sends them to
// that endpoint only, so headers never follow a tool whose context names
// an older server.
type Answer struct {
	Endpoint string            `json:"endpoint"`
	Headers  map[string]string `json:"headers"`
}

// MaxRequestBytes and MaxAnswerBytes bound the two bodies.
const (
	MaxRequestBytes = 1 << 10
	MaxAnswerBytes  = 64 << 10
)
