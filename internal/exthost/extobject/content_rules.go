package extobject

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contentpolicy"
)

// contentRuleErrors compiles spec.contentRules for the Valid condition,
// each error at its rule's expression. The workspace pipeline compiles
// them again (only an imposed platform extension's count); a rule that
// does not compile there breaks the platform's policy.
func contentRuleErrors(spec *v1alpha1.ExtensionSpec) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "contentRules")
	for i, r := range spec.ContentRules {
		if err := contentpolicy.Check(r); err != nil {
			errs = append(errs, field.Invalid(p.Index(i).Child("expression"), r.Expression, err.Error()))
		}
	}
	return errs
}
