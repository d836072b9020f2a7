package testenv

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"
)

// SigningKey is a fresh Ed25519 key, as the manager's context-signing
// Secret holds.
func SigningKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
