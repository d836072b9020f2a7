package hostd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/published"
)

// The policy epoch (docs/hostd.md, "Policy epoch"). With Options.PolicyDir
// set, hostd serves a context only while the namespace's epoch, signed by the
// manager, names the platform policy the context carries
// (contract.Manifest.PlatformPolicy), or names it as the previous policy and
// its grace has not run out. A context the manager could not bring to the
// platform's current policy (frozen: a copy kept aside, a Workspace whose
// updates stopped) then stops being served: every tool call and event is
// denied with the reason, /readyz answers 503 naming it, and
// loadout_hostd_context_refusals_total{reason="StalePolicy"} counts it.

// ReasonStalePolicy is the refusal reason of a context the namespace's
// policy epoch does not accept, and of every context while the epoch itself
// cannot be read or verified.
const ReasonStalePolicy = "StalePolicy"

// maxEpochBytes bounds policy.json; a real one is a few hundred bytes.
const maxEpochBytes = 16 << 10

// StalePolicyError says why a context is not served under the epoch.
type StalePolicyError struct {
	// Hash is the context's; empty when no context is concerned.
	Hash string
	// Message is the reason, naming the digests.
	Message string
}

func (e *StalePolicyError) Error() string {
	if e.Hash == "" {
		return "stale platform policy: " + e.Message
	}
	return "stale platform policy: context " + e.Hash + " refused: " + e.Message
}

// policyEpoch is a loaded epoch, or why there is none.
type policyEpoch struct {
	epoch *contract.PolicyEpoch
	err   error
}

// loadEpoch reads and verifies the epoch in dir: policy.json and its
// signature, read from one ConfigMap snapshot (the ..data target). keys nil
// verifies nothing (unsigned contexts allowed, development only).
func loadEpoch(dir string, keys *contextsig.Verifier) policyEpoch {
	base := dir
	if _, err := os.Lstat(filepath.Join(dir, "..data")); err == nil {
		if base, err = filepath.EvalSymlinks(filepath.Join(dir, "..data")); err != nil {
			return policyEpoch{err: fmt.Errorf("the policy epoch in %s cannot be read: %w", dir, err)}
		}
	}
	raw, err := published.ReadFileBounded(filepath.Join(base, contract.KeyPolicy), maxEpochBytes)
	if err != nil {
		return policyEpoch{err: fmt.Errorf("the policy epoch in %s cannot be read: %w", dir, err)}
	}
	// Fields a newer manager adds are ignored (the signature covers the
	// bytes): an older hostd must not fail closed on them.
	var ep contract.PolicyEpoch
	if err := json.Unmarshal(raw, &ep); err != nil || ep.Namespace == "" || ep.PlatformPolicy == "" {
		return policyEpoch{err: fmt.Errorf("the policy epoch in %s is not a policy epoch (%s with namespace and platformPolicy): %w", dir, contract.KeyPolicy, err)}
	}
	if keys != nil {
		sig, err := published.ReadFileBounded(filepath.Join(base, contract.KeySignature), 64<<10)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return policyEpoch{err: fmt.Errorf("the policy epoch in %s cannot be read: %w", dir, err)}
		}
		if err := keys.VerifyEpoch(sig, contract.EpochHash(raw), ep.Namespace, contract.EpochConfigMap); err != nil {
			reason := "Unverified"
			var ve *contextsig.VerifyError
			if errors.As(err, &ve) {
				reason = ve.Reason
			}
			return policyEpoch{err: fmt.Errorf("the policy epoch of namespace %s is refused (%s): %w", ep.Namespace, reason, err)}
		}
	}
	return policyEpoch{epoch: &ep}
}

// judge says whether the epoch lets a context of namespace carrying
// platformPolicy be served at now. served is the Workspace this host serves
// ("namespace/name"), or empty.
func (p policyEpoch) judge(hash string, m contract.Manifest, served string, now time.Time) error {
	namespace, platformPolicy := m.Workspace.Namespace, m.PlatformPolicy
	refuse := func(format string, args ...any) error {
		return &StalePolicyError{Hash: hash, Message: fmt.Sprintf(format, args...)}
	}
	if contract.DeniesEverything(m) {
		// The context of a Workspace being deleted carries no platform
		// policy and lets nothing through: it serves at once, under any
		// epoch or none.
		return nil
	}
	if p.err != nil {
		return refuse("%v; no context is served without the platform's current policy", p.err)
	}
	ep := p.epoch
	if wantNS, _, _ := strings.Cut(served, "/"); served != "" && ep.Namespace != wantNS {
		return refuse("the policy epoch is namespace %s's, this host serves namespace %s", ep.Namespace, wantNS)
	}
	if ep.Namespace != namespace {
		return refuse("the policy epoch is namespace %s's, the context is namespace %s's", ep.Namespace, namespace)
	}
	if ep.Accepts(platformPolicy, now) {
		return nil
	}
	carried := platformPolicy
	if carried == "" {
		carried = "no platform policy"
	}
	msg := fmt.Sprintf("it carries %s, the platform's current policy for namespace %s is %s", carried, ep.Namespace, ep.PlatformPolicy)
	if prev := ep.Previous; prev != nil && prev.PlatformPolicy == platformPolicy {
		msg += fmt.Sprintf(" (the previous one, %s, was accepted until %s)", prev.PlatformPolicy, prev.Until.UTC().Format(time.RFC3339))
	}
	return refuse("%s", msg)
}

// policyFingerprint identifies one version of the policy directory; the zero
// value without one.
func (s *Server) policyFingerprint() fingerprint {
	if s.opts.PolicyDir == "" {
		return fingerprint{}
	}
	return takeDirFingerprint(s.opts.PolicyDir, contract.KeyPolicy, contract.KeySignature)
}

// checkPolicy refuses a context the epoch does not accept: it runs after
// the signature check of every load, so a refused new context leaves the
// last good one serving (judged too) and is tried again when the epoch
// changes (the poll fingerprint covers the policy directory).
func (s *Server) checkPolicy(hash string, m contract.Manifest) error {
	if s.opts.PolicyDir == "" {
		return nil
	}
	err := s.epoch.judge(hash, m, s.opts.Workspace, s.opts.Now())
	if err != nil {
		s.metrics.refusals.WithLabelValues(ReasonStalePolicy).Inc()
	}
	return err
}

// judgeServed decides whether the served context may still be served under
// the epoch at this moment: a new epoch, or the previous policy's grace
// running out, stops it. The caller holds s.mu.
func (s *Server) judgeServed() {
	if s.opts.PolicyDir == "" {
		return
	}
	cur := s.current.Load()
	if cur == nil {
		s.refused.Store(nil)
		return
	}
	m := cur.published.Manifest()
	err := s.epoch.judge(cur.hash, m, s.opts.Workspace, s.opts.Now())
	was := s.refused.Load()
	if err == nil {
		if was != nil {
			s.opts.Logger.Info("The served context's platform policy is current again", "hash", cur.hash)
		}
		s.refused.Store(nil)
		return
	}
	if was == nil || was.Error() != err.Error() {
		s.metrics.refusals.WithLabelValues(ReasonStalePolicy).Inc()
		s.opts.Logger.Error("The served context's platform policy is stale: every tool call and event is denied", "hash", cur.hash, "error", err)
	}
	s.refused.Store(&refusal{err: err})
}

// refusal is why the served context is not served.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }

// policyRefused returns why the served context must not answer, or nil.
func (s *Server) policyRefused() error {
	if r := s.refused.Load(); r != nil {
		return r.err
	}
	return nil
}
