package outbound

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// signedCall signs body for the receiver the way hostd does, at at.
func signedCall(t *testing.T, keyFile string, at time.Time, body []byte) http.Header {
	t.Helper()
	secrets, err := ReadSecrets(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	if err := Sign(h, secrets, newMessageID(), at, body); err != nil {
		t.Fatal(err)
	}
	return h
}

func writeKey(t *testing.T, secrets ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "key")
	data := ""
	for _, s := range secrets {
		data += s + "\n"
	}
	if err := os.WriteFile(f, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func bodyFor(t *testing.T, a Audience) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"audience": a, "call": map[string]any{"id": "c-1"}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The receiving side of a signed call: it verifies once; a replay of the
// same call, a stale or future timestamp, a call signed for another tool or
// URL, another key or a changed body are each refused with their reason.
func TestVerifier_RefusesReplaysStaleCallsAndOtherAudiences(t *testing.T) {
	key := writeKey(t, NewSecret())
	now := time.Unix(1_800_000_000, 0)
	me := Audience{Kind: AudienceTool, Name: "review_note", URL: "http://review-notes.team-a.svc:8080/notes"}
	v := NewVerifier(VerifyOptions{KeyFile: key, Audience: me, Now: func() time.Time { return now }})
	body := bodyFor(t, me)

	h := signedCall(t, key, now.Add(-time.Minute), body)
	if err := v.Verify(h, body); err != nil {
		t.Fatalf("a fresh call for this receiver: %v", err)
	}
	if err := v.Verify(h, body); !errors.Is(err, ErrReplayed) {
		t.Fatalf("replay: %v, want ErrReplayed", err)
	}
	other := Audience{Kind: AudienceTool, Name: "deploy", URL: "http://deploy.team-a.svc:8080/run"}
	sameNameOtherURL := Audience{Kind: AudienceTool, Name: "review_note", URL: "http://review-notes.team-b.svc:8080/notes"}
	hook := Audience{Kind: AudienceHook, Name: "review_note", URL: me.URL}
	for name, c := range map[string]struct {
		h    http.Header
		body []byte
		want error
	}{
		"stale":                        {signedCall(t, key, now.Add(-6*time.Minute), body), body, ErrStale},
		"from the future":              {signedCall(t, key, now.Add(6*time.Minute), body), body, ErrStale},
		"signed for another tool":      {signedCall(t, key, now, bodyFor(t, other)), bodyFor(t, other), ErrAudience},
		"same tool name, another URL":  {signedCall(t, key, now, bodyFor(t, sameNameOtherURL)), bodyFor(t, sameNameOtherURL), ErrAudience},
		"a hook of the tool's name":    {signedCall(t, key, now, bodyFor(t, hook)), bodyFor(t, hook), ErrAudience},
		"no audience":                  {signedCall(t, key, now, []byte(`{"call":{}}`)), []byte(`{"call":{}}`), ErrAudience},
		"another key":                  {signedCall(t, writeKey(t, NewSecret()), now, body), body, ErrSignature},
		"body changed after signing":   {signedCall(t, key, now, body), append([]byte(" "), body...), ErrSignature},
		"unsigned":                     {http.Header{}, body, ErrUnsigned},
		"timestamp changed after sign": {retimed(signedCall(t, key, now, body), now.Add(time.Second)), body, ErrSignature},
	} {
		if err := v.Verify(c.h, c.body); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}

	// Rotation: the receiver holds the old and the new secret; calls signed
	// with either verify.
	newSecret := NewSecret()
	both := writeKey(t, NewSecret(), newSecret)
	rv := NewVerifier(VerifyOptions{KeyFile: both, Audience: me, Now: func() time.Time { return now }})
	if err := rv.Verify(signedCall(t, writeKey(t, newSecret), now, body), body); err != nil {
		t.Errorf("a call signed with the new key during rotation: %v", err)
	}
}

// retimed moves a signed call's timestamp, as a replayer would to pass the
// tolerance check.
func retimed(h http.Header, at time.Time) http.Header {
	h.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	return h
}

// The replay memory is bounded: when it is full of ids still inside the
// window a new call is refused (forgetting one would let its replay in);
// once their window has passed they are forgotten and calls verify again,
// while a replay of a forgotten id is stale by then.
func TestVerifier_ReplayMemoryIsBounded(t *testing.T) {
	key := writeKey(t, NewSecret())
	now := time.Unix(1_800_000_000, 0)
	me := Audience{Kind: AudienceHook, Name: "guard", URL: "https://guard.platform.svc:443/review"}
	v := NewVerifier(VerifyOptions{KeyFile: key, Audience: me, MaxRemembered: 3, Tolerance: time.Minute, Now: func() time.Time { return now }})
	body := bodyFor(t, me)
	first := signedCall(t, key, now, body)
	for i := range 3 {
		h := first
		if i > 0 {
			h = signedCall(t, key, now, body)
		}
		if err := v.Verify(h, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Verify(signedCall(t, key, now, body), body); !errors.Is(err, ErrBusy) {
		t.Fatalf("a fourth call inside the window: %v, want ErrBusy", err)
	}
	now = now.Add(61 * time.Second)
	if err := v.Verify(signedCall(t, key, now, body), body); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	if len(v.seen) != 1 || len(v.order) != 1 {
		t.Fatalf("remembers %d ids (%d in order), want 1", len(v.seen), len(v.order))
	}
	if err := v.Verify(first, body); !errors.Is(err, ErrStale) {
		t.Fatalf("replay of a forgotten id: %v, want ErrStale", err)
	}
}
