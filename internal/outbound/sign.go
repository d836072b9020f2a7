package outbound

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// hostd signs tool and webhook calls the Standard Webhooks way
// (https://www.standardwebhooks.com/), so a Service in any language can
// verify them with that project's libraries:
//
//	webhook-id:        a fresh random id per call (msg_<32 hex>)
//	webhook-timestamp: seconds since the Unix epoch when the call was sent
//	webhook-signature: v1,<base64 HMAC-SHA256(secret, id "." timestamp "." body)>
//
// Several space-separated signatures are sent when the key file holds
// several secrets (rotation). The spec leaves the receiver unnamed; hostd
// binds it into the signed body instead: every tool invocation and hook
// review carries "audience": {"kind", "name", "url"}, the tool or hook it is
// for and the URL hostd sent it to, and a receiver refuses a call whose
// audience is not itself. A Service that replays a call it received to
// another tool's Service is then refused there, and the id and timestamp
// let a receiver refuse a replay to itself.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// secretPrefix starts a Standard Webhooks secret: whsec_ and then base64.
const secretPrefix = "whsec_"

// minSecretBytes refuses keys too short to resist guessing; the spec
// suggests 24 to 64 bytes.
const minSecretBytes = 16

// Kinds of receivers a call can be signed for.
const (
	AudienceTool = "tool"
	AudienceHook = "hook"
)

// Audience is the one receiver a signed call is for: a tool or a hook by
// name, at the URL hostd sent the call to (as the published registry names
// it, e.g. http://review-notes.team-a.svc:8080/notes). It travels in the
// signed body as "audience".
type Audience struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	URL  string `json:"url"`
}

func (a Audience) String() string { return a.Kind + " " + a.Name + " at " + a.URL }

// ParseSecrets reads a signing key file: one Standard Webhooks secret per
// line (whsec_ and base64, or base64 alone), blank lines and # comments
// ignored. Every secret signs and every secret verifies, so a key is rotated
// without an outage by adding the new one to both sides, then removing the
// old one.
func ParseSecrets(data []byte) ([][]byte, error) {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(line, secretPrefix))
		switch {
		case err != nil:
			return nil, fmt.Errorf("line %d is not a Standard Webhooks secret (whsec_ and base64)", n)
		case len(key) < minSecretBytes:
			return nil, fmt.Errorf("line %d: the secret is %d bytes, under the %d a signing key needs", n, len(key), minSecretBytes)
		}
		out = append(out, key)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no secret")
	}
	return out, nil
}

// NewSecret returns a fresh secret in the key file format (whsec_ and the
// base64 of 32 random bytes).
func NewSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return secretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// ReadSecrets reads and parses a key file; errors name the file.
func ReadSecrets(file string) ([][]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	secrets, err := ParseSecrets(data)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", file, err)
	}
	return secrets, nil
}

// Sign sets the Standard Webhooks headers of a call with body: id, the
// timestamp at, and one signature per secret.
func Sign(h http.Header, secrets [][]byte, id string, at time.Time, body []byte) error {
	sigs := make([]string, 0, len(secrets))
	for _, key := range secrets {
		wh, err := standardwebhooks.NewWebhookRaw(key)
		if err != nil {
			return err
		}
		sig, err := wh.Sign(id, at, body)
		if err != nil {
			return err
		}
		sigs = append(sigs, sig)
	}
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, fmt.Sprint(at.Unix()))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	return nil
}

// newMessageID is a webhook-id no other call shares.
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "msg_" + hex.EncodeToString(b[:])
}

// sign signs req with the key file, read on every call so a rotated Secret
// takes effect at once; a missing or bad key fails the call rather than
// sending it unsigned.
func (c *Client) sign(req *http.Request, body []byte) error {
	secrets, err := ReadSecrets(c.opts.SigningKeyFile)
	if err != nil {
		return err
	}
	return Sign(req.Header, secrets, newMessageID(), c.opts.Now(), body)
}
