package vocab

// ConditionCommandsOffered reports whether every agent that reads a
// materialized tree gets every command of the Workspace's Templates as the
// Template says: False (ReasonCommandsNotOffered) when a command is withheld
// from an agent that cannot run it whole (a command with tool steps is not a
// Claude Code command), the message naming the commands, the agents and why.
// Codex reads no user-defined commands at all; the message says so, and that
// alone leaves the condition True. It does not decide Ready: the context is
// published, and Pi runs every command.
const ConditionCommandsOffered ConditionType = "CommandsOffered"

// Reasons of ConditionCommandsOffered.
const (
	// ReasonCommandsOffered: no command is withheld for what it holds.
	ReasonCommandsOffered ConditionReason = "CommandsOffered"
	// ReasonCommandsNotOffered: some command is withheld from an agent; the
	// message names it, the agent and why.
	ReasonCommandsNotOffered ConditionReason = "CommandsNotOffered"
)
