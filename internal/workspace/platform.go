package workspace

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contentpolicy"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/sandboxpolicy"
	"github.com/loadout-dev/loadout/internal/signerpolicy"
)

// Platform is the platform's imposed policy for one namespace (docs/concepts.md,
// "Policy apart from content"): the hooks, denied tools, message types and
// prompt guides of the platform extensions that apply to the namespace's
// Workspaces whatever they say, their parameters, and its digest. It is
// computed from the namespace alone (PlatformPolicyOf), never from a
// Workspace, so no tenant input can make it fail or change it: the policy
// epoch names its digest, every Workspace's resolution takes it as input,
// and a Workspace whose own input is invalid publishes it with its held
// content (Held).
type Platform struct {
	// Namespace is the project namespace the policy applies to.
	Namespace string
	// Extensions are the imposed extensions in load order, their parameters
	// resolved for the namespace, each prepared (Candidate.Prepared) by the
	// load of Registry: a Workspace's pass commits them, in its own load
	// order, and imports nothing of them again.
	Extensions []Candidate
	// UnlabelledPlatform lists the platform namespaces without a valid trust
	// label: they impose nothing (Policy.TrustOf).
	UnlabelledPlatform []string
	// Registry holds the imposed extensions, loaded alone, and their denied
	// tools.
	Registry contract.Registry
	// IDs are the ids of the imposed extensions that loaded.
	IDs []string
	// Deny is the platform's denied tools: the spec.deniedTools of the
	// imposed extensions.
	Deny []string
	// Sandbox is the platform's sandbox: the intersection of the imposed
	// extensions' declarations, narrowed by nothing of the tenant's.
	Sandbox *contract.Sandbox
	// Broken, when set, says why the platform's own policy does not load:
	// an imposed extension was rejected. Nothing a tenant writes causes it.
	Broken string
	// SkillSigners are the imposed extensions' signer declarations
	// (skill_signers.go), in load order; nil entries for extensions that
	// declare none. Registry.SkillSigners holds them in effective form.
	SkillSigners []*contract.SignerRequirement
	// Content are the imposed extensions' content rules (content_rules.go); nil or empty allows all content.
	Content *contentpolicy.Rules

	digest string
}

// Digest is the digest of the policy (PlatformPolicyDigest): the one source
// of the platform digest that the manifest of every context of the
// namespace and the namespace's policy epoch carry.
func (p *Platform) Digest() string { return p.digest }

// PlatformPolicyOf gathers and loads the platform extensions imposed on the
// Workspaces of namespace: every extension of a labelled platform namespace
// that is not offered and whose namespace selector selects namespace. The
// error is transient only.
func PlatformPolicyOf(ctx context.Context, namespace string, objs Objects, pol Policy, loader ExtensionLoader) (*Platform, error) {
	p := &Platform{Namespace: namespace}
	for _, ns := range pol.PlatformNamespaces {
		l, err := objs.NamespaceLabels(ctx, ns)
		if err != nil {
			return nil, fmt.Errorf("reading namespace %s: %w", ns, err)
		}
		if pol.UnlabelledPlatform(ns, l) {
			p.UnlabelledPlatform = append(p.UnlabelledPlatform, ns)
			continue
		}
		exts, err := imposedIn(ctx, ns, LoadsExtensions(pol.TrustOf(ns, l)), namespace, objs)
		if err != nil {
			return nil, err
		}
		p.Extensions = append(p.Extensions, exts...)
	}
	p.Extensions = loadOrder(p.Extensions, pol.PlatformNamespaces)
	if err := resolveParams(ctx, namespace, objs, p.Extensions); err != nil {
		return nil, err
	}
	plan := &Plan{Extensions: p.Extensions}
	for _, c := range p.Extensions {
		if c.Trusted {
			for _, d := range c.Extension.Spec.DeniedTools {
				plan.Deny = append(plan.Deny, string(d))
			}
		}
	}
	// The loader keeps what it prepared on plan.Extensions, which are
	// p.Extensions: every Workspace's plan starts from them.
	reg, outcomes := loader.LoadExtensions(ctx, contract.WorkspaceRef{Namespace: namespace}, plan)
	p.Extensions = plan.Extensions
	p.Registry, p.Deny = reg, slices.Clone(plan.Deny)
	p.Sandbox = sandboxpolicy.Effective(platformSandboxes(p.Extensions), nil)
	p.Registry.Sandbox = p.Sandbox
	var signersErr error
	p.SkillSigners, signersErr = platformSkillSigners(p.Extensions)
	p.Registry.SkillSigners = signerpolicy.Effective(p.SkillSigners, nil)
	var broken []string
	for _, o := range outcomes {
		switch o.State {
		case vocab.ExtensionRejected:
			broken = append(broken, fmt.Sprintf("%s/%s: %s", o.Namespace, o.Extension, o.Message))
		case vocab.ExtensionLoaded:
			p.IDs = append(p.IDs, o.Extension)
		}
	}
	if signersErr != nil {
		broken = append(broken, signersErr.Error())
	}
	p.Broken = strings.Join(broken, "; ")
	p.digest = PlatformPolicyDigest(p.Registry, p.IDs, p.Deny, p.Sandbox)
	p.applyContentRules()
	return p, nil
}

// imposedIn returns the extensions of platform namespace ns imposed on the
// Workspaces of namespace. A selector that does not parse selects every
// namespace: a platform policy that is broken applies too widely rather
// than not at all.
func imposedIn(ctx context.Context, ns string, trusted bool, namespace string, objs Objects) ([]Candidate, error) {
	extensions, err := objs.Extensions(ctx, ns)
	if err != nil {
		return nil, err
	}
	var out []Candidate
	var nsLabels map[string]string
	for i := range extensions {
		e := &extensions[i]
		if Offered(e) {
			continue
		}
		if nsLabels == nil {
			if nsLabels, err = objs.NamespaceLabels(ctx, namespace); err != nil {
				return nil, fmt.Errorf("reading namespace %s: %w", namespace, err)
			}
			if nsLabels == nil {
				nsLabels = map[string]string{}
			}
		}
		if AppliesTo(e, nsLabels) {
			out = append(out, Candidate{Extension: e, Trusted: trusted, Enforced: true, Platform: true})
		}
	}
	return out, nil
}
