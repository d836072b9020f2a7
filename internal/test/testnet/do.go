package testnet

import (
	"io"
	"net/http"
	"testing"
)

// Do sends req with c (http.DefaultClient when nil) and returns the answer's
// status and body; it fails t when the request or the read fails.
func Do(t testing.TB, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
