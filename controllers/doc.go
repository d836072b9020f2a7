// Package controllers holds Loadout's reconcilers: the Workspace reconciler,
// which resolves and publishes each Workspace's context, and small reconcilers
// that report the validity of Skills, Templates and Extensions.
package controllers
