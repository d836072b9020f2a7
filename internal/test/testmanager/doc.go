// Package testmanager starts the Loadout controllers in process, wired as
// cmd/manager wires them, for the test and bench harnesses.
package testmanager
