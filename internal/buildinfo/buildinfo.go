// Package buildinfo holds the version, commit and build date that `make
// build` and the Dockerfile stamp into the binaries with -ldflags -X, so that
// `loadout version` and `manager --version` say exactly what is running.
package buildinfo

import (
	"fmt"
	"runtime"
)

// Set at build time:
//
//	go build -ldflags "-X github.com/loadout-dev/loadout/internal/buildinfo.version=v0.1.0 \
//	  -X github.com/loadout-dev/loadout/internal/buildinfo.commit=$(git rev-parse HEAD) \
//	  -X github.com/loadout-dev/loadout/internal/buildinfo.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
//
// They are unexported variables (not constants) because -X can only set
// string variables; Get is the way to read them.
var (
	version = "dev"
	commit  = "unknown"
	date    = "unknown"
)

// Info describes one build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildDate string `json:"buildDate"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns what this binary was stamped with ("dev" and "unknown" for a
// plain `go build`).
func Get() Info {
	return Info{
		Version:   version,
		Commit:    commit,
		BuildDate: date,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// String is the one line both binaries print for --version.
func (i Info) String() string {
	return fmt.Sprintf("%s (commit %s, built %s, %s %s)", i.Version, i.Commit, i.BuildDate, i.GoVersion, i.Platform)
}
