package vocab

// ConditionToolsDiscovered reports, on an Extension with spec.mcpServer,
// whether the manager listed the server's tools at its last attempt.
// Reasons: ReasonDiscovered, ReasonDiscoveryFailed, ReasonDiscoveryNotAllowed.
// A failure keeps the last good tool list in status.mcpServer.
const ConditionToolsDiscovered ConditionType = "ToolsDiscovered"

// Reasons of ConditionToolsDiscovered.
const (
	// ReasonDiscovered: the server's allowed tools are in status.mcpServer.
	ReasonDiscovered ConditionReason = "Discovered"
	// ReasonDiscoveryFailed: the server could not be reached, or answered
	// something refused (too large, too many tools, a schema that does not
	// compile, colliding names); retried with backoff.
	ReasonDiscoveryFailed ConditionReason = "DiscoveryFailed"
	// ReasonDiscoveryNotAllowed: the server is not contacted: the
	// Extension's namespace loads no extensions, or the spec asks for what
	// only a platform namespace may (another namespace's Service, a URL).
	ReasonDiscoveryNotAllowed ConditionReason = "DiscoveryNotAllowed"
)
