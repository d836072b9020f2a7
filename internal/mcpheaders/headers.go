package mcpheaders

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Bounds of a Secret's headers: an API key or two fit many times over,
// and nothing a misconfigured Secret holds can make every request huge.
const (
	MaxHeaders          = 16
	MaxHeaderValueBytes = 8 << 10
	MaxHeaderBytes      = 16 << 10
)

// reserved are headers the MCP transport, the outbound client or HTTP itself
// set: a Secret that set them would break the protocol or impersonate
// something other than a credential.
var reserved = []string{
	"Accept", "Connection", "Content-Length", "Content-Type", "Host", "Keep-Alive", "Last-Event-Id",
	"Mcp-Protocol-Version", "Mcp-Session-Id", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding",
	"Upgrade", "User-Agent", "Webhook-Id", "Webhook-Signature", "Webhook-Timestamp",
}

// FromSecret returns the headers of the Secret name (namespace/name) whose
// data is data: the entries named by keys, or every entry when keys is
// empty, each key a header name. Errors name the Secret and the key, never
// a value. It takes the data, not the object, so that hostd, which links
// this package for Check, links no Kubernetes API types.
func FromSecret(name string, data map[string][]byte, keys []string) (http.Header, error) {
	if len(keys) == 0 {
		for k := range data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("secret %s holds no entries: no headers to send", name)
	}
	if len(keys) > MaxHeaders {
		return nil, fmt.Errorf("secret %s: %d headers, more than %d", name, len(keys), MaxHeaders)
	}
	h := http.Header{}
	total := 0
	for _, k := range keys {
		v, ok := data[k]
		if !ok {
			return nil, fmt.Errorf("secret %s has no key %q", name, k)
		}
		if err := checkHeader(k, v); err != nil {
			return nil, fmt.Errorf("secret %s key %q: %w", name, k, err)
		}
		total += len(k) + len(v)
		if total > MaxHeaderBytes {
			return nil, fmt.Errorf("secret %s: the headers exceed %d bytes together", name, MaxHeaderBytes)
		}
		h.Set(k, string(v))
	}
	return h, nil
}

// Check reports whether h is a header set FromSecret could have returned:
// hostd applies it to what the manager answered before sending anything.
func Check(h http.Header) error {
	if len(h) > MaxHeaders {
		return fmt.Errorf("%d headers, more than %d", len(h), MaxHeaders)
	}
	total := 0
	for k, vs := range h {
		if len(vs) != 1 {
			return fmt.Errorf("header %q: %d values, want one", k, len(vs))
		}
		if err := checkHeader(k, []byte(vs[0])); err != nil {
			return fmt.Errorf("header %q: %w", k, err)
		}
		total += len(k) + len(vs[0])
	}
	if total > MaxHeaderBytes {
		return fmt.Errorf("the headers exceed %d bytes together", MaxHeaderBytes)
	}
	return nil
}

func checkHeader(k string, v []byte) error {
	switch {
	case !validName(k):
		return fmt.Errorf("not an HTTP header name")
	case slices.Contains(reserved, http.CanonicalHeaderKey(k)) || strings.HasPrefix(http.CanonicalHeaderKey(k), "Sec-"):
		return fmt.Errorf("%s is set by the MCP transport or HTTP itself and cannot come from a Secret", http.CanonicalHeaderKey(k))
	case len(v) == 0:
		return fmt.Errorf("empty value")
	case len(v) > MaxHeaderValueBytes:
		return fmt.Errorf("the value exceeds %d bytes", MaxHeaderValueBytes)
	case !validValue(v):
		// The value is not repeated: it is a credential.
		return fmt.Errorf("the value holds a control character or leading or trailing white space (a trailing newline?)")
	}
	return nil
}

// validName reports whether k is an RFC 9110 token.
func validName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// validValue reports whether v holds no control character but tab (RFC 9110
// field-value; obs-text allowed) and no leading or trailing white space,
// which HTTP would strip, so the server would see another value.
func validValue(v []byte) bool {
	if v[0] == ' ' || v[0] == '\t' || v[len(v)-1] == ' ' || v[len(v)-1] == '\t' {
		return false
	}
	for _, c := range v {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
