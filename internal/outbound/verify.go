package outbound

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Defaults of a Verifier whose options leave them unset.
const (
	// DefaultTolerance is how far a call's timestamp may be from the
	// receiver's clock, either way: the Standard Webhooks default.
	DefaultTolerance = 5 * time.Minute
	// DefaultMaxRemembered bounds the webhook-ids a Verifier remembers: a
	// call per 3 ms, sustained over a whole tolerance window either way.
	DefaultMaxRemembered = 200_000
)

// Why a Verifier refuses a call; test with errors.Is.
var (
	ErrUnsigned  = errors.New("the call is not signed: webhook-id, webhook-timestamp and webhook-signature are required")
	ErrSignature = errors.New("no signature matches")
	ErrStale     = errors.New("the call's timestamp is outside the tolerance")
	ErrReplayed  = errors.New("the call was already received (webhook-id seen before)")
	ErrAudience  = errors.New("the call is signed for another receiver")
	// ErrBusy is a replay memory full of ids still inside the window: the
	// call is refused, since forgetting an id would let its replay in.
	ErrBusy = errors.New("too many calls inside the tolerance window to remember; retry")
)

// VerifyOptions configure a Verifier.
type VerifyOptions struct {
	// KeyFile is the signing key file (the Secret hostd signs with), read on
	// every call so a rotation takes effect at once. ParseSecrets says its
	// format.
	KeyFile string
	// Audience is the receiver itself: a call whose signed body names
	// another audience is refused.
	Audience Audience
	// Tolerance bounds the age (and the skew into the future) of a call's
	// timestamp. Zero means DefaultTolerance.
	Tolerance time.Duration
	// MaxRemembered bounds the webhook-ids remembered. Zero means
	// DefaultMaxRemembered.
	MaxRemembered int
	// Now is the receiver's clock; nil means time.Now.
	Now func() time.Time
}

// Verifier checks signed calls the way a receiving Service must: a valid
// Standard Webhooks signature under the key file, a timestamp within the
// tolerance, the receiver's own audience in the signed body, and a
// webhook-id not seen before. Ids are remembered until their timestamp
// leaves the window, after which the timestamp check refuses a replay by
// itself, so memory stays bounded. Safe for concurrent use.
type Verifier struct {
	opts VerifyOptions

	mu sync.Mutex
	// seen maps each remembered id to the end of its window; order lists
	// them as received, so expired ids are forgotten from the front.
	seen  map[string]time.Time
	order []string
}

// NewVerifier returns a Verifier.
func NewVerifier(opts VerifyOptions) *Verifier {
	if opts.Tolerance <= 0 {
		opts.Tolerance = DefaultTolerance
	}
	if opts.MaxRemembered <= 0 {
		opts.MaxRemembered = DefaultMaxRemembered
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Verifier{opts: opts, seen: map[string]time.Time{}}
}

// Verify checks one call: its headers and its exact body bytes. A nil error
// means the call is authentic, fresh, for this receiver and new; the id is
// then remembered, so the same call verifies only once.
func (v *Verifier) Verify(h http.Header, body []byte) error {
	id, ts := h.Get(HeaderID), h.Get(HeaderTimestamp)
	if id == "" || ts == "" || h.Get(HeaderSignature) == "" {
		return ErrUnsigned
	}
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: webhook-timestamp %q is not a Unix time", ErrUnsigned, ts)
	}
	at, now := time.Unix(sent, 0), v.opts.Now()
	if d := now.Sub(at); d > v.opts.Tolerance || d < -v.opts.Tolerance {
		return fmt.Errorf("%w: sent %s, %s from now (tolerance %s)", ErrStale, at.UTC().Format(time.RFC3339), d.Round(time.Second), v.opts.Tolerance)
	}
	if err := v.checkSignature(h, body); err != nil {
		return err
	}
	if err := v.checkAudience(body); err != nil {
		return err
	}
	return v.remember(id, at.Add(v.opts.Tolerance), now)
}

// checkSignature accepts a signature under any secret of the key file. The
// library checks the signature only: the timestamp was checked against this
// Verifier's clock and tolerance.
func (v *Verifier) checkSignature(h http.Header, body []byte) error {
	secrets, err := ReadSecrets(v.opts.KeyFile)
	if err != nil {
		return err
	}
	for _, key := range secrets {
		wh, err := standardwebhooks.NewWebhookRaw(key)
		if err != nil {
			return err
		}
		if wh.VerifyIgnoringTimestamp(body, h) == nil {
			return nil
		}
	}
	return ErrSignature
}

// checkAudience reads the signed body's "audience" and compares it with the
// receiver's own, field by field.
func (v *Verifier) checkAudience(body []byte) error {
	var signed struct {
		Audience *Audience `json:"audience"`
	}
	if err := json.Unmarshal(body, &signed); err != nil || signed.Audience == nil {
		return fmt.Errorf("%w: the signed body names no audience", ErrAudience)
	}
	if *signed.Audience != v.opts.Audience {
		return fmt.Errorf("%w: signed for %s, this is %s", ErrAudience, *signed.Audience, v.opts.Audience)
	}
	return nil
}

// remember records id until its window ends, refusing one already there.
func (v *Verifier) remember(id string, until, now time.Time) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if end, ok := v.seen[id]; ok && now.Before(end) {
		return ErrReplayed
	}
	v.forget(now)
	if len(v.seen) >= v.opts.MaxRemembered {
		return ErrBusy
	}
	v.seen[id] = until
	v.order = append(v.order, id)
	return nil
}

// forget drops the ids whose window has ended: from the front of order as
// long as they have, and all of them in one pass when memory is full.
func (v *Verifier) forget(now time.Time) {
	expired := func(id string) bool { end, ok := v.seen[id]; return !ok || !now.Before(end) }
	drop := 0
	for drop < len(v.order) && expired(v.order[drop]) {
		delete(v.seen, v.order[drop])
		drop++
	}
	v.order = v.order[drop:]
	if len(v.seen) < v.opts.MaxRemembered {
		return
	}
	kept := v.order[:0]
	for _, id := range v.order {
		if expired(id) {
			delete(v.seen, id)
		} else {
			kept = append(kept, id)
		}
	}
	v.order = kept
}
