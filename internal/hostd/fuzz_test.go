package hostd

import (
	"strings"
	"testing"
)

// FuzzDecodeCall: request bodies come from any agent in any language. Decoding
// must never panic, and whatever it accepts carries a call id and name.
func FuzzDecodeCall(f *testing.F) {
	for _, seed := range []string{
		`{"call":{"id":"1","name":"review_note","arguments":{"text":"hi"}}}`,
		`{"call":{"id":"1","name":"t"},"result":{"toolCallId":"1","toolName":"t","isError":false,"content":[{"type":"text","text":"ok"}]}}`,
		`{"call":{"id":"","name":"t"}}`,
		`{"call":{"id":"1","name":"t","arguments":[1,2]}}`,
		`{"call":{"id":"1","name":"t"}} trailing`,
		`{"call":{"id":"1","name":"t","arguments":{"n":1e999}}}`,
		`null`, `{`, ``,
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, body string, withResult bool) {
		req, err := DecodeCall(strings.NewReader(body), withResult)
		if err != nil {
			return
		}
		if req.Call.ID == "" || req.Call.Name == "" || (withResult && req.Result == nil) {
			t.Fatalf("accepted an incomplete request: %+v", req)
		}
	})
}
