package outbound

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// SignatureHeader carries "sha256=" and the lowercase hex HMAC-SHA256 of the
// request body, keyed with the bytes of the signing key file (exactly, no
// trimming), the way GitHub signs webhook deliveries. docs/hostd.md says how
// a Service verifies it.
const SignatureHeader = "X-Loadout-Signature-256"

const signaturePrefix = "sha256="

// Signature returns the SignatureHeader value for body under key.
func Signature(key, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether header is body's signature under key, comparing in
// constant time. Services written in Go can use it as is.
func Verify(key, body []byte, header string) bool {
	if len(key) == 0 || !strings.HasPrefix(header, signaturePrefix) {
		return false
	}
	return hmac.Equal([]byte(header), []byte(Signature(key, body)))
}

func (c *Client) sign(req *http.Request, body []byte) error {
	key, err := os.ReadFile(c.opts.SigningKeyFile)
	if err != nil {
		return fmt.Errorf("signing key: %w", err)
	}
	if len(key) == 0 {
		return errors.New("signing key: " + c.opts.SigningKeyFile + " is empty")
	}
	req.Header.Set(SignatureHeader, Signature(key, body))
	return nil
}
