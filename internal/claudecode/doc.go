// Package claudecode answers Claude Code's command hooks (PreToolUse,
// PostToolUse) from hostd, so the Workspace's policy applies to Claude Code's
// own tools, failing closed when hostd cannot answer.
package claudecode
