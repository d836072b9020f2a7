package hostd

import (
	"strings"
	"testing"
)

// TestBefore_DuplicateKeysAreRejectedNotLastWins: a call naming a key twice
// is a 400, so a hook and the tool cannot read different values.
func TestBefore_DuplicateKeysAreRejectedNotLastWins(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	var out ErrorResponse
	body := `{"call":{"id":"1","name":"review_note","arguments":{"text":"ok","text":"SECRET"}}}`
	if code := post(t, ts.URL+"/v1/before", body, &out); code != 400 || !strings.Contains(out.Error, `duplicate key "text"`) {
		t.Fatalf("status %d %+v", code, out)
	}
}

// TestBefore_DenyMatchesToolNamesCaseInsensitively: tools.deny ["bash"]
// blocks "Bash" too (agents disagree on case).
func TestBefore_DenyMatchesToolNamesCaseInsensitively(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	for _, name := range []string{"bash", "Bash", "BASH"} {
		var out BeforeResponse
		if code := post(t, ts.URL+"/v1/before", `{"call":{"id":"1","name":"`+name+`","arguments":{}}}`, &out); code != 200 || out.Allowed {
			t.Fatalf("%s: status %d allowed %v", name, code, out.Allowed)
		}
	}
}

// TestRender_OutputIsCapped: a template that repeats an argument cannot make
// hostd build a message over resources.MaxRenderedBytes.
func TestRender_OutputIsCapped(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	var out ErrorResponse
	body := `{"template":"review","args":{"file":"` + strings.Repeat("x", 600<<10) + `","owner":"o"}}`
	if code := post(t, ts.URL+"/v1/render", body, &out); code != 422 || !strings.Contains(out.Error, "would exceed") {
		t.Fatalf("status %d %+v", code, out)
	}
}
