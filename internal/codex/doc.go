// Package codex answers Codex's command hooks from hostd (docs/agents.md#codex).
package codex
