package exthost

import (
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1"
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
		h, herrs := compileHook(&spec.Hooks[i], path.Child("hooks").Index(i), sc)
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

func compileHook(in *v1alpha1.ExtensionHook, p *field.Path, sc specContext) (Hook, field.ErrorList) {
	var errs field.ErrorList
	h := Hook{Name: in.Name, Event: in.Event, Timeout: time.Duration(in.TimeoutSeconds) * time.Second}
	if in.Match != nil {
		for _, t := range in.Match.Tools {
			h.Tools = append(h.Tools, string(t))
		}
	}
	if !hookNamePattern.MatchString(in.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), in.Name, "must match "+hookNamePattern.String()))
	}
	if in.Event != eventBefore && in.Event != eventAfter {
		errs = append(errs, field.NotSupported(p.Child("event"), in.Event, []string{string(eventBefore), string(eventAfter)}))
		return h, errs
	}
	if in.TimeoutSeconds != 0 && (in.TimeoutSeconds < 1 || time.Duration(in.TimeoutSeconds)*time.Second > MaxTimeout) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), in.TimeoutSeconds, "must be between 1 and 30"))
	}
	switch {
	case (in.CEL == nil) == (in.Webhook == nil):
		errs = append(errs, field.Invalid(p, in.Name, "exactly one of cel or webhook must be set"))
	case in.CEL != nil:
		handler, err := CompileCEL(in.Event, in.CEL.Expression, in.CEL.Message)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("cel", "expression"), in.CEL.Expression, err.Error()))
		}
		h.Handler = handler
	default:
		url, err := sc.resolve(sc.namespace, in.Webhook.Service)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("webhook", "service"), in.Webhook.Service.Name, err.Error()))
		}
		h.Handler = NewWebhook(outbound.Target{URL: url, CABundle: in.Webhook.Service.CABundle}, sc.extension, in.Name, sc.client)
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
