package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/loadout-dev/loadout/internal/contentpolicy"
	"github.com/loadout-dev/loadout/internal/contract"
)

// contentRulesOf compiles the content rules of the imposed extensions that
// load: only an imposed extension of a trusted platform
// namespace declares rules; an offered or a tenant's extension's rules are
// ignored (its Valid condition says so). A rule that does not compile
// breaks the platform's policy, as a rejected imposed extension does.
func contentRulesOf(exts []Candidate) (*contentpolicy.Rules, error) {
	var rules []contentpolicy.Rule
	for _, c := range exts {
		if !c.Trusted || !c.Enforced || !c.Platform {
			continue
		}
		for _, r := range c.Extension.Spec.ContentRules {
			rules = append(rules, contentpolicy.Rule{Source: c.Extension.Namespace + "/" + c.Extension.LogicalName(), ContentRule: r})
		}
	}
	return contentpolicy.Compile(rules)
}

// applyContentRules sets the platform's content rules, checks its own
// tools against them (a platform tool a rule refuses breaks the platform's
// policy: the platform must fix its own server or rule) and mixes the
// rules into the policy digest, so a changed rule is a changed policy.
func (p *Platform) applyContentRules() {
	rules, err := contentRulesOf(p.Extensions)
	if err != nil {
		p.Broken = joinBroken(p.Broken, err.Error())
		return
	}
	p.Content = rules
	if rules.Empty() {
		return
	}
	for i := range p.Registry.Tools {
		if err := rules.Tool(&p.Registry.Tools[i]); err != nil {
			p.Broken = joinBroken(p.Broken, err.Error())
		}
	}
	sum := sha256.Sum256([]byte(p.digest + "\ncontent-rules:" + rules.Digest()))
	p.digest = contract.HashPrefix + hex.EncodeToString(sum[:])
}

func joinBroken(was, now string) string {
	if was == "" {
		return now
	}
	return was + "; " + now
}

// tenantTool selects the tools the platform's rules judge in a Workspace's
// context: every tool but the platform's own, which applyContentRules
// judged already.
func (p *Platform) tenantTool(t *contract.Tool) bool {
	return !slices.Contains(p.IDs, t.Extension)
}

// checkContent refuses a resolution whose rendered content breaks a
// content rule: a Failure of the tenant's input (ContentRefused), so the
// Workspace keeps its last good content, if that passes the rules too
// (Decide).
func checkContent(res *Resolution, platform *Platform) error {
	if platform == nil || platform.Content.Empty() || res.Result == nil || res.Failure != nil {
		return nil
	}
	err := platform.Content.Context(res.Result.Data, platform.tenantTool)
	var refused *contentpolicy.RefusedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &refused):
		res.Failure = &Failure{Phase: PhaseResolve, Reason: refused.Reason(), Err: err}
		return nil
	default:
		return fmt.Errorf("content rules: %w", err)
	}
}

// heldPassesContent reports whether a context about to be held passes the
// current content rules: content a rule refuses now is not kept, whatever
// it was when it was good.
func heldPassesContent(data map[string]string, platform *Platform) bool {
	return platform.Content.Empty() || platform.Content.Context(data, platform.tenantTool) == nil
}
