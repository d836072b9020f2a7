package main

// The images `make images` builds have an empty base: no CA bundle on disk.
// Go uses these compiled-in roots only where the system offers none, so a
// mounted or distro bundle still wins. This binary installs them at start;
// the sidecar (cmd/loadout-hostd) only on its first https request.
import "github.com/loadout-dev/loadout/internal/caroots"

func init() { caroots.Ensure() }
