// Package toolclass is Loadout's one tool vocabulary: the canonical classes
// (shell, read, write, edit, search, web) that hooks' match.tools and deny
// lists may name, each mapped to the tool names Pi, Claude Code and Codex
// use for it, and the case-insensitive matching every policy decision uses.
package toolclass
