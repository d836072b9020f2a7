package workspace

import (
	"errors"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/signerpolicy"
)

// Signed skills: who must have signed a Workspace's OCI skills
// joins the policy like the sandbox does. The imposed extensions'
// declarations are the platform's (Platform.SkillSigners, part of its
// digest); a tenant's declarations add to them (internal/signerpolicy).

// platformSkillSigners are the declarations of the trusted imposed
// extensions. A key that does not parse is returned as an error beside a
// requirement no artifact meets: the platform's policy is then broken, and
// what is published under it refuses every OCI skill.
func platformSkillSigners(exts []Candidate) ([]*contract.SignerRequirement, error) {
	var out []*contract.SignerRequirement
	var errs []error
	for _, c := range exts {
		if c.Trusted && c.Enforced {
			r, err := signerpolicy.FromAPI(extensionName(c.Extension), contract.AuthorityPlatform, c.Extension.Spec.SkillSigners)
			out, errs = append(out, r), append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// tenantSkillSigners are the Workspace's own declaration and those of the
// trusted extensions exts holds that are not imposed.
func tenantSkillSigners(ws *v1alpha1.Workspace, exts []*v1alpha1.Extension) ([]*contract.SignerRequirement, error) {
	r, err := signerpolicy.FromAPI("Workspace "+ws.Namespace+"/"+ws.Name, contract.AuthorityProject, ws.Spec.SkillSigners)
	out, errs := []*contract.SignerRequirement{r}, []error{err}
	for _, e := range exts {
		r, err := signerpolicy.FromAPI(extensionName(e), contract.AuthorityProject, e.Spec.SkillSigners)
		out, errs = append(out, r), append(errs, err)
	}
	return out, errors.Join(errs...)
}

// skillSignersOf is a Workspace's requirements at resolution: the
// platform's, then the tenant's (sandboxOf's split: an untrusted extension
// declares nothing). A tenant key that does not parse fails the
// resolution (signerpolicy.InvalidError): the tenant's input is invalid.
func skillSignersOf(ws *v1alpha1.Workspace, platform []*contract.SignerRequirement, exts []Candidate) ([]contract.SignerRequirement, error) {
	var own []*v1alpha1.Extension
	for _, c := range exts {
		if c.Trusted && !c.Enforced {
			own = append(own, c.Extension)
		}
	}
	tenant, err := tenantSkillSigners(ws, own)
	if err != nil {
		return nil, err
	}
	return signerpolicy.Effective(platform, tenant), nil
}

func extensionName(e *v1alpha1.Extension) string { return e.Namespace + "/" + e.Name }
