package main

// The images `make images` builds have an empty base: no CA bundle on disk.
// Go uses these compiled-in roots only where the system offers none, so a
// mounted or distro bundle still wins.
import _ "golang.org/x/crypto/x509roots/fallback"
