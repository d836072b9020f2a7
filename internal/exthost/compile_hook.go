package exthost

import (
	"fmt"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// hookNamePattern is the hook name admission enforces on Extension objects;
// a service-backed manifest or a registry never passed admission, so the
// compiler checks it itself.
var hookNamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// HookDecl is a hook as declared: by an Extension spec (a webhook names a
// Service, resolved by package extobject) or by a published registry (a
// webhook has the URL the publishing controller resolved). CompileHook is the
// one compiler of both, so the controller and hostd accept and run exactly
// the same hooks.
type HookDecl struct {
	Name           string
	Event          vocab.HookEvent
	Tools          []string
	TimeoutSeconds int32
	CEL            *contract.CELHook
	// SyntaxOnly parses a CEL hook without type-checking it; the result is
	// for validation only and never loads.
	SyntaxOnly bool
	// Webhook returns the webhook's target; nil for a hook without one.
	Webhook func() (outbound.Target, *field.Error)
	// Approval sends the hook's asks to the cluster (BeforeToolCall only).
	Approval *contract.HookApproval
	// RecordArguments: the decision ledger records the arguments (or
	// prompt) of what the hook judges.
	RecordArguments bool
}

// CompileHook validates and compiles one hook; every problem names its field
// under p. extension and client are the webhook's caller identity and client.
func CompileHook(d HookDecl, p *field.Path, extension string, client outbound.Doer) (Hook, field.ErrorList) {
	var errs field.ErrorList
	h := Hook{Name: d.Name, Event: d.Event, Tools: d.Tools, Timeout: time.Duration(d.TimeoutSeconds) * time.Second}
	h.Approval, errs = compileApproval(d.Approval, d.Event, p.Child("approval"))
	h.RecordArguments = d.RecordArguments
	if !hookNamePattern.MatchString(d.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), d.Name, "must match "+hookNamePattern.String()))
	}
	if !knownEvent(d.Event) {
		errs = append(errs, field.NotSupported(p.Child("event"), d.Event, eventNames()))
		return h, errs
	}
	if len(d.Tools) > 0 && !d.Event.IsToolEvent() {
		errs = append(errs, field.Invalid(p.Child("match", "tools"), d.Tools, fmt.Sprintf("hook %q: match applies to tool events only, not %s", d.Name, d.Event)))
	}
	if d.TimeoutSeconds != 0 && (d.TimeoutSeconds < 1 || h.Timeout > MaxTimeout) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), d.TimeoutSeconds, fmt.Sprintf("must be between 1 and %d", vocab.MaxHookTimeoutSeconds)))
	}
	switch {
	case (d.CEL == nil) == (d.Webhook == nil):
		errs = append(errs, field.Invalid(p, d.Name, "exactly one of cel or webhook must be set"))
	case d.CEL != nil && d.SyntaxOnly:
		if err := CheckCELSyntax(d.Event, d.CEL.Expression); err != nil {
			errs = append(errs, field.Invalid(p.Child("cel", "expression"), d.CEL.Expression, err.Error()))
		}
	case d.CEL != nil:
		handler, err := CompileCEL(d.Event, d.CEL.Expression, d.CEL.Message)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("cel", "expression"), d.CEL.Expression, fmt.Sprintf("hook %q: %v", d.Name, err)))
		}
		h.Handler = handler
	default:
		target, err := d.Webhook()
		if err != nil {
			errs = append(errs, err)
		}
		h.Handler = NewWebhook(target, extension, d.Name, client)
	}
	return h, errs
}

// Invalid turns a compiler's field errors into the error that rejects an
// extension whole.
func Invalid(errs field.ErrorList) error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return &InvalidError{Errs: out}
}
