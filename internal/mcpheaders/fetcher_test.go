package mcpheaders

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/test/testenv"
)

func testFetcher(t *testing.T, handler http.HandlerFunc, now func() time.Time) *Fetcher {
	t.Helper()
	srv := httptest.NewTLSServer(handler)
	t.Cleanup(srv.Close)
	ca := pemOf(t, srv)
	token := testenv.TempFile(t, "token", []byte("tok"), 0o600)
	f, err := NewFetcher(FetcherOptions{URL: srv.URL + Path, CA: ca, TokenFile: token, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func pemOf(t *testing.T, srv *httptest.Server) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString("-----BEGIN CERTIFICATE-----\n")
	enc := base64Lines(srv.Certificate().Raw)
	b.WriteString(enc)
	b.WriteString("-----END CERTIFICATE-----\n")
	return []byte(b.String())
}

func answer(endpoint string, headers map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(Answer{Endpoint: endpoint, Headers: headers})
	}
}

// Headers are kept for the TTL, asked for once by concurrent calls, and
// asked for again after it.
func TestFetcher_CachesBrieflyAndSendsItsToken(t *testing.T) {
	var asked atomic.Int32
	now := time.Unix(0, 0)
	f := testFetcher(t, func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		answer("http://mcp/mcp", map[string]string{"X-Api-Key": "k1"})(w, r)
	}, func() time.Time { return now })
	for range 3 {
		h, err := f.Headers(context.Background(), "p/e", "http://mcp/mcp")
		if err != nil || h.Get("X-Api-Key") != "k1" {
			t.Fatalf("headers = %v, %v", h, err)
		}
	}
	if asked.Load() != 1 {
		t.Fatalf("the manager was asked %d times within the TTL, want 1", asked.Load())
	}
	now = now.Add(DefaultTTL)
	if _, err := f.Headers(context.Background(), "p/e", "http://mcp/mcp"); err != nil || asked.Load() != 2 {
		t.Fatalf("after the TTL: %v, asked %d times, want 2", err, asked.Load())
	}
}

// Every failure is an error naming why and never a value; nothing failed
// is kept (R-EXT-7).
func TestFetcher_FailuresBlockTheCallNamingWhy(t *testing.T) {
	big := strings.Repeat("v", MaxHeaderValueBytes+1)
	cases := map[string]struct {
		handler http.HandlerFunc
		says    string
	}{
		"refused":           {func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) }, "refused with 403"},
		"not JSON":          {func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>")) }, "not JSON"},
		"another endpoint":  {answer("http://elsewhere/mcp", map[string]string{"X-Api-Key": "secret-1"}), "are for http://elsewhere/mcp"},
		"a reserved header": {answer("http://mcp/mcp", map[string]string{"Host": "secret-1"}), "cannot come from a Secret"},
		"a huge value":      {answer("http://mcp/mcp", map[string]string{"X-Api-Key": big}), "exceeds"},
		"a newline":         {answer("http://mcp/mcp", map[string]string{"X-Api-Key": "secret-1\r\nX-Evil: 1"}), "control character"},
		"too many values": {func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"endpoint":"http://mcp/mcp","headers":{"a":"1"},"pad":[` + strings.Repeat("1,", 200) + `1]}`))
		}, "answer refused"},
		"too big": {func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(strings.Repeat(" ", MaxAnswerBytes+1)))
		}, "exceeds"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var asked atomic.Int32
			f := testFetcher(t, func(w http.ResponseWriter, r *http.Request) { asked.Add(1); tc.handler(w, r) }, nil)
			for range 2 {
				h, err := f.Headers(context.Background(), "p/e", "http://mcp/mcp")
				if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "secret-1") {
					t.Fatalf("headers = %v, %v; want an error saying %q without the value", h, err, tc.says)
				}
			}
			if asked.Load() != 2 {
				t.Fatalf("asked %d times, want 2 (a failure is not kept)", asked.Load())
			}
		})
	}
}

func TestFetcher_EndpointDownFailsWithinItsTimeout(t *testing.T) {
	token := testenv.TempFile(t, "token", []byte("tok"), 0o600)
	f, err := NewFetcher(FetcherOptions{URL: "https://127.0.0.1:1" + Path, CA: []byte("x"), TokenFile: token})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Headers(context.Background(), "p/e", "http://mcp/mcp"); err == nil || !strings.Contains(err.Error(), "from the manager") {
		t.Fatalf("err = %v, want one naming the manager", err)
	}
}

func TestNewFetcher_RefusesPlainHTTPOrNoCA(t *testing.T) {
	for _, o := range []FetcherOptions{{URL: "http://m/x", CA: []byte("x"), TokenFile: "t"}, {URL: "https://m/x", TokenFile: "t"}, {URL: "https://m/x", CA: []byte("x")}} {
		if _, err := NewFetcher(o); err == nil {
			t.Errorf("NewFetcher(%+v) accepted", o)
		}
	}
}

func TestFromSecret_SelectsBoundsAndNeverRepeatsAValue(t *testing.T) {
	data := map[string][]byte{"X-Api-Key": []byte("secret-1"), "Other": []byte("o"), "Bad": []byte("secret-1\n")}
	h, err := FromSecret("p/s", data, []string{"X-Api-Key"})
	if err != nil || len(h) != 1 || h.Get("X-Api-Key") != "secret-1" {
		t.Fatalf("keys [X-Api-Key]: %v, %v", h, err)
	}
	for _, keys := range [][]string{nil, {"Bad"}, {"Missing"}} {
		_, err := FromSecret("p/s", data, keys)
		if err == nil || strings.Contains(err.Error(), "secret-1") || !strings.Contains(err.Error(), "p/s") {
			t.Errorf("keys %v: err = %v, want one naming the Secret and never the value", keys, err)
		}
	}
}

func base64Lines(der []byte) string {
	enc := base64.StdEncoding.EncodeToString(der)
	var b strings.Builder
	for len(enc) > 64 {
		b.WriteString(enc[:64] + "\n")
		enc = enc[64:]
	}
	b.WriteString(enc + "\n")
	return b.String()
}
