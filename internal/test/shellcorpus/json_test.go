package shellcorpus

import (
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite deleting.json")

// deleting.json is every runnable deleting line (Issue42, then Guard's)
// for the agents' tests that are not written in Go (integrations/pi): it
// must say what the Go corpus says.
func TestDeletingJSON_MatchesTheCorpus(t *testing.T) {
	b, err := json.MarshalIndent(Deleting(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile("deleting.json", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("deleting.json")
	if err != nil || string(got) != string(b) {
		t.Fatalf("deleting.json is not the corpus (%v): run go test ./internal/test/shellcorpus -update", err)
	}
}
