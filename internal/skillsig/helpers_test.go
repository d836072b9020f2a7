package skillsig_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// sigOf is the base64 signature of a bundle's message signature.
func sigOf(t *testing.T, bundle []byte) string {
	t.Helper()
	var b struct {
		MessageSignature struct {
			Signature string `json:"signature"`
		} `json:"messageSignature"`
	}
	if err := json.Unmarshal(bundle, &b); err != nil || b.MessageSignature.Signature == "" {
		t.Fatalf("bundle %s: %v", bundle, err)
	}
	return b.MessageSignature.Signature
}

func replaceOnce(s, old, repl string) string { return strings.Replace(s, old, repl, 1) }
