// Package claudecode answers Claude Code's hooks from the Workspace's policy,
// the same way whether Claude Code runs the command hook (`loadout hook
// claude-code`, which asks hostd over HTTP) or POSTs to hostd's http hook
// endpoint (which asks its loaded context directly): one decision function,
// two transports. A PreToolUse that cannot be answered is denied.
// docs/agents.md describes the wiring and the answer to each event.
package claudecode
