// Package skillpack packs a skill directory into a deterministic tar layer and
// an OCI artifact (the format `loadout push` writes and agents fetch), and
// unpacks one back into files with their modes, refusing anything unsafe.
package skillpack
