package exthost

import (
	"fmt"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// Admission enforces these patterns on Extension objects; a service-backed
// manifest never passed admission, so the host checks them itself.
var (
	toolNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)
	hookNamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)
)

// compiled is an ExtensionSpec turned into registrations: schemas checked,
// CEL compiled, webhook URLs resolved. Compiling happens once, at load.
type compiled struct {
	tools        []Tool
	hooks        []Hook
	messageTypes []v1alpha1.MessageType
	promptGuide  string
}

// specContext is what compiling a spec needs from outside: where webhook
// Services live and how to reach them.
type specContext struct {
	extension string
	namespace string
	resolve   WebhookResolver
	client    outbound.Doer
	// syntaxOnly parses CEL hooks without type-checking them; the result
	// is for validation only and never loads.
	syntaxOnly bool
}

// compileSpec validates and compiles spec. Every problem is reported with its
// field path; any problem means the extension must not load.
func compileSpec(spec *v1alpha1.ExtensionSpec, path *field.Path, sc specContext) (*compiled, field.ErrorList) {
	var errs field.ErrorList
	out := &compiled{promptGuide: spec.PromptGuide, messageTypes: spec.MessageTypes}

	tools := map[string]bool{}
	for i, t := range spec.Tools {
		p := path.Child("tools").Index(i)
		name := string(t.Name)
		switch {
		case !toolNamePattern.MatchString(name):
			errs = append(errs, field.Invalid(p.Child("name"), name, "must match "+toolNamePattern.String()))
		case tools[name]:
			errs = append(errs, field.Duplicate(p.Child("name"), name))
		}
		tools[name] = true
		var schema []byte
		if t.InputSchema != nil {
			schema = t.InputSchema.Raw
			if _, err := CompileInputSchema(schema); err != nil {
				errs = append(errs, field.Invalid(p.Child("inputSchema"), "(the schema)", err.Error()))
			}
		}
		tool := Tool{Name: name, Description: string(t.Description), ReadOnly: t.ReadOnly, InputSchema: schema}
		if t.Implementation != nil {
			svc, serr := compileImplementation(t.Implementation, p.Child("implementation"), sc)
			errs = append(errs, serr...)
			tool.Service = svc
		}
		out.tools = append(out.tools, tool)
	}

	hooks := map[string]bool{}
	for i := range spec.Hooks {
		p := path.Child("hooks").Index(i)
		h, herrs := compileHook(specHook(&spec.Hooks[i], p, sc), p, sc.extension, sc.client)
		errs = append(errs, herrs...)
		if hooks[h.Name] {
			errs = append(errs, field.Duplicate(path.Child("hooks").Index(i).Child("name"), h.Name))
		}
		hooks[h.Name] = true
		out.hooks = append(out.hooks, h)
	}

	types := map[string]bool{}
	for i, m := range spec.MessageTypes {
		p := path.Child("messageTypes").Index(i).Child("type")
		switch {
		case m.Type == "":
			errs = append(errs, field.Required(p, ""))
		case types[m.Type]:
			errs = append(errs, field.Duplicate(p, m.Type))
		}
		types[m.Type] = true
	}
	return out, errs
}

// hookDecl is a hook as declared: by an Extension spec (a webhook names a
// Service, resolved here) or by a published registry (a webhook has the URL
// the publishing controller resolved). compileHook is the one compiler of
// both, so the controller and hostd accept and run exactly the same hooks.
type hookDecl struct {
	name           string
	event          vocab.HookEvent
	tools          []string
	timeoutSeconds int32
	cel            *v1alpha1.CELHook
	// syntaxOnly: see specContext.
	syntaxOnly bool
	// webhook returns the webhook's target; nil for a hook without one.
	webhook func() (outbound.Target, *field.Error)
}

// specHook declares a hook of an Extension spec.
func specHook(in *v1alpha1.ExtensionHook, p *field.Path, sc specContext) hookDecl {
	d := hookDecl{name: in.Name, event: in.Event, timeoutSeconds: in.TimeoutSeconds, cel: in.CEL, syntaxOnly: sc.syntaxOnly}
	if in.Match != nil {
		for _, t := range in.Match.Tools {
			d.tools = append(d.tools, string(t))
		}
	}
	if in.Webhook != nil {
		d.webhook = func() (outbound.Target, *field.Error) {
			url, err := sc.resolve(sc.namespace, in.Webhook.Service)
			if err != nil {
				return outbound.Target{}, field.Invalid(p.Child("webhook", "service"), in.Webhook.Service.Name, err.Error())
			}
			return outbound.Target{URL: url, CABundle: in.Webhook.Service.CABundle}, nil
		}
	}
	return d
}

// compileHook validates and compiles one hook; every problem names its field
// under p. extension and client are the webhook's caller identity and client.
func compileHook(d hookDecl, p *field.Path, extension string, client outbound.Doer) (Hook, field.ErrorList) {
	var errs field.ErrorList
	h := Hook{Name: d.name, Event: d.event, Tools: d.tools, Timeout: time.Duration(d.timeoutSeconds) * time.Second}
	if !hookNamePattern.MatchString(d.name) {
		errs = append(errs, field.Invalid(p.Child("name"), d.name, "must match "+hookNamePattern.String()))
	}
	if !knownEvent(d.event) {
		errs = append(errs, field.NotSupported(p.Child("event"), d.event, eventNames()))
		return h, errs
	}
	if len(d.tools) > 0 && !d.event.IsToolEvent() {
		errs = append(errs, field.Invalid(p.Child("match", "tools"), d.tools, fmt.Sprintf("hook %q: match applies to tool events only, not %s", d.name, d.event)))
	}
	if d.timeoutSeconds != 0 && (d.timeoutSeconds < 1 || h.Timeout > MaxTimeout) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), d.timeoutSeconds, fmt.Sprintf("must be between 1 and %d", vocab.MaxHookTimeoutSeconds)))
	}
	switch {
	case (d.cel == nil) == (d.webhook == nil):
		errs = append(errs, field.Invalid(p, d.name, "exactly one of cel or webhook must be set"))
	case d.cel != nil && d.syntaxOnly:
		if err := CheckCELSyntax(d.event, d.cel.Expression); err != nil {
			errs = append(errs, field.Invalid(p.Child("cel", "expression"), d.cel.Expression, err.Error()))
		}
	case d.cel != nil:
		handler, err := CompileCEL(d.event, d.cel.Expression, d.cel.Message)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("cel", "expression"), d.cel.Expression, fmt.Sprintf("hook %q: %v", d.name, err)))
		}
		h.Handler = handler
	default:
		target, err := d.webhook()
		if err != nil {
			errs = append(errs, err)
		}
		h.Handler = NewWebhook(target, extension, d.name, client)
	}
	return h, errs
}

// compileImplementation resolves a runnable tool's Service with the same
// resolver, and so the same rules, as a webhook hook's.
func compileImplementation(in *v1alpha1.ToolImplementation, p *field.Path, sc specContext) (*contract.ToolService, field.ErrorList) {
	var errs field.ErrorList
	timeout := in.TimeoutSeconds
	if timeout == 0 {
		timeout = int32(DefaultToolTimeout / time.Second)
	}
	if timeout < 1 || time.Duration(timeout)*time.Second > MaxToolTimeout {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), in.TimeoutSeconds, "must be between 1 and 300"))
	}
	url, err := sc.resolve(sc.namespace, in.Service)
	if err != nil {
		errs = append(errs, field.Invalid(p.Child("service"), in.Service.Name, err.Error()))
	}
	return &contract.ToolService{URL: url, TimeoutSeconds: timeout, CABundle: in.Service.CABundle}, errs
}

// specFactory is the factory of a declarative extension: it compiles the
// spec (CEL, input schemas, webhook URLs) and registers the result. Any error
// rejects the whole extension; collisions with other extensions are the
// commit's job.
func specFactory(spec *v1alpha1.ExtensionSpec, sc specContext) Factory {
	return func(api API) error {
		c, errs := compileSpec(spec, field.NewPath("spec"), sc)
		if len(errs) > 0 {
			return invalid(errs)
		}
		for _, t := range c.tools {
			api.RegisterTool(t)
		}
		for _, h := range c.hooks {
			api.On(h)
		}
		for _, m := range c.messageTypes {
			api.RegisterMessageType(m.Type, m.InContext)
		}
		if c.promptGuide != "" {
			api.SetPromptGuide(c.promptGuide)
		}
		return nil
	}
}

func invalid(errs field.ErrorList) error {
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return &InvalidError{Errs: out}
}
