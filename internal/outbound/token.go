package outbound

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// DefaultTokenTTL is how long a Client reuses the service token it read
// before reading the file again. The kubelet rewrites a projected token when
// 80% of its lifetime has passed (8 of the minimum 10 minutes), so a new
// token is picked up long before the old one expires.
const DefaultTokenTTL = 30 * time.Second

// maxTokenBytes bounds the token file; a ServiceAccount token is a JWT of a
// few kilobytes.
const maxTokenBytes = 64 << 10

// tokenSource reads a projected ServiceAccount token from a file the kubelet
// rotates, caching it for ttl. The token is a credential: it is never put in
// an error or a log, only in the Authorization header of a call.
type tokenSource struct {
	file string
	ttl  time.Duration
	now  func() time.Time

	mu     sync.Mutex
	token  string
	readAt time.Time
}

// get returns the token, read again once ttl has passed since the last
// read. A missing, empty or oversized file is an error (the call fails
// rather than going out without the token); the last good token is reused
// meanwhile only while it is younger than ttl.
func (t *tokenSource) get() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if t.token != "" && now.Sub(t.readAt) < t.ttl {
		return t.token, nil
	}
	data, err := os.ReadFile(t.file)
	switch {
	case err != nil:
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named below; nothing else of the file is
		}
		return "", fmt.Errorf("service token %s: %w", t.file, err)
	case len(data) > maxTokenBytes:
		return "", fmt.Errorf("service token %s: over %d bytes", t.file, maxTokenBytes)
	}
	tok := string(bytes.TrimSpace(data))
	if tok == "" {
		return "", fmt.Errorf("service token %s: empty", t.file)
	}
	t.token, t.readAt = tok, now
	return tok, nil
}
