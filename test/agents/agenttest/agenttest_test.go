package agenttest

import (
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

// The harness serves what the agent tests rely on: hostd on the samples'
// context with its tree, and the review-notes Service reached through hostd.
func TestStartHostdOnSamplesWithReviewNotes(t *testing.T) {
	data := PreviewSamples(t)
	notes := StartReviewNotes(t, data)
	h := StartHostd(t, data, notes.HostdArgs...)
	if _, err := os.Stat(h.TreeDir + "/skills"); err != nil {
		t.Fatalf("no materialized skills: %v", err)
	}
	if got := notes.Notes(t); len(got) != 0 {
		t.Fatalf("a fresh Service has notes: %v", got)
	}
	if !strings.HasPrefix(h.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %q", h.URL)
	}
}
