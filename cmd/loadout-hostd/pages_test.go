package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/exepages"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// binaryResident is how many bytes of this process's executable (its text
// and read-only data) are resident.
func binaryResident(t *testing.T) int64 {
	t.Helper()
	rss, ok := exepages.Resident()
	if !ok {
		t.Skip("needs /proc/self/smaps (Linux)")
	}
	return rss
}

// Once its first context is loaded, the serving sidecar gives back the
// pages of its binary that only start-up touched (internal/exepages): less
// of the binary is resident after it than before hostd started, though
// starting touched more of it. Without the release pages only accumulate.
func TestSidecarGivesBackItsStartupPages(t *testing.T) {
	before := binaryResident(t)
	serveSidecar(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		now := binaryResident(t)
		if now < before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes of the binary resident before hostd started, %d once it serves: start-up's pages were not given back", before, now)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// --release-startup-pages=false keeps them: an operator who would rather
// the first calls pay no faults gets what hostd did before.
func TestSidecarKeepsItsStartupPagesWhenTold(t *testing.T) {
	before := binaryResident(t)
	serveSidecar(t, "--release-startup-pages=false")
	time.Sleep(time.Second) // the first load, empty here, is done well before
	if now := binaryResident(t); now < before {
		t.Fatalf("%d bytes of the binary resident before hostd started, %d once it serves: pages were given back", before, now)
	}
}

// serveSidecar runs the sidecar's serving command in process, on an empty
// context directory (its first load fails, and is done), until it serves.
func serveSidecar(t *testing.T, args ...string) {
	t.Helper()
	addr := testnet.FreeAddr(t)
	testenv.StartCommand(t, newRootCommand(), append([]string{"--allow-unsigned-context", "--context-dir", t.TempDir(), "--addr", addr, "--ledger=false"}, args...)...)
	testnet.WaitStatus(t, "http://"+addr+"/healthz", http.StatusOK)
}
