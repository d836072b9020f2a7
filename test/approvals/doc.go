// Package approvals proves Approvals end to end on an envtest API server
// with the admission policy loadout-approvals and the chart's roles: a real
// `loadout hostd` in a pod's identity asks, `loadout approve` and `loadout
// deny` decide (docs/hooks.md, "Approvals").
package approvals
