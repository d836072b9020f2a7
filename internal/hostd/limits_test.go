package hostd

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/loadout-dev/loadout/internal/jsonlimit"
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

// TestBefore_DuplicateKeyFoundInALargeObject: the key set switches from a
// slice to a map past 16 keys and still finds the duplicate.
func TestBefore_DuplicateKeyFoundInALargeObject(t *testing.T) {
	var args strings.Builder
	for i := range 40 {
		fmt.Fprintf(&args, `"k%d":1,`, i)
	}
	for _, dup := range []string{"k3", "k39"} {
		err := jsonlimit.CheckDuplicateKeys([]byte(`{"a":{` + args.String() + `"` + dup + `":2}}`))
		if err == nil || !strings.Contains(err.Error(), `duplicate key "`+dup+`"`) {
			t.Errorf("duplicate %s in a 41-key object: %v", dup, err)
		}
	}
	if err := jsonlimit.CheckDuplicateKeys([]byte(`{"a":{` + args.String() + `"other":2}}`)); err != nil {
		t.Errorf("no duplicate: %v", err)
	}
}

// TestDecodeCost_CountsValuesNotOnlyBytes: the costliest accepted call
// (MaxJSONValues tiny values) takes a large share of the decode budget, while
// a 1 MiB string takes a small one and ordinary calls share it freely.
// Brackets and commas inside strings are not values.
func TestDecodeCost_CountsValuesNotOnlyBytes(t *testing.T) {
	body := maximalCall()
	if got := countJSONValues(body); got > MaxJSONValues || got < MaxJSONValues-10 {
		t.Fatalf("maximal call holds %d values, want just under %d", got, MaxJSONValues)
	}
	if got := decodeCost(len(body), countJSONValues(body)); got < decodeBudget/2 {
		t.Errorf("maximal call costs %d, want at least half the budget %d", got, decodeBudget)
	}
	str := []byte(`{"call":{"id":"1","name":"n","arguments":{"text":"` + strings.Repeat(`[{,:\"`, (1<<20)/7) + `"}}}`)
	if got := countJSONValues(str); got != 11 {
		t.Errorf("a 1 MiB string full of punctuation counts %d values, want 11", got)
	}
	for text, want := range map[string]int{`[]`: 1, `[{},{}]`: 3, `{"a":1,"b":[true,null,-1.5e+3]}`: 8, `"x\"[{"`: 1} {
		if got := countJSONValues([]byte(text)); got != want {
			t.Errorf("%s: %d values, want %d", text, got, want)
		}
	}
	if got := decodeCost(100, 9); got > 4<<10 {
		t.Errorf("ordinary call costs %d", got)
	}
}

// TestBefore_TooManyJSONValuesIsRefusedNamingTheLimit: 1 MiB of empty
// objects (350k values, ~100 MB decoded) is refused before decoding.
func TestBefore_TooManyJSONValuesIsRefusedNamingTheLimit(t *testing.T) {
	_, ts, _ := newTestServer(t, fixedRegistry())
	body := `{"call":{"id":"1","name":"review_note","arguments":{"l":[` + strings.Repeat("{},", 300_000) + `{}]}}}`
	var out ErrorResponse
	if code := post(t, ts.URL+"/v1/before", body, &out); code != http.StatusRequestEntityTooLarge || !strings.Contains(out.Error, "more than 100000 JSON values") {
		t.Fatalf("status %d %+v", code, out)
	}
}

// readAllSized reads a body into one buffer of its Content-Length and still
// refuses a body shorter than announced, and reads one without a length.
func TestReadAllSized(t *testing.T) {
	if b, err := readAllSized(strings.NewReader(`{"a":1}`), 7); err != nil || string(b) != `{"a":1}` || cap(b) != 8 {
		t.Fatalf("exact: %q %v (cap %d)", b, err, cap(b))
	}
	if b, err := readAllSized(io.MultiReader(strings.NewReader(`{"a"`), iotest.ErrReader(io.ErrUnexpectedEOF)), 7); err == nil {
		t.Fatalf("short body read as %q", b)
	}
	if b, err := readAllSized(strings.NewReader(`{}`), -1); err != nil || string(b) != `{}` {
		t.Fatalf("unknown length: %q %v", b, err)
	}
}
