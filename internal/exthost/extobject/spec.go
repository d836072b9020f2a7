package extobject

import (
	"regexp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// Admission enforces this pattern on Extension objects; a service-backed
// manifest never passed admission, so the loader checks it itself.
var (
	toolNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)
)

// compiled is an ExtensionSpec turned into registrations: schemas checked,
// CEL compiled, webhook URLs resolved. Compiling happens once, at load.
type compiled struct {
	tools        []exthost.Tool
	hooks        []exthost.Hook
	messageTypes []v1alpha1.MessageType
	promptGuide  string
}

// specContext is what compiling a spec needs from outside: where webhook
// Services live and how to reach them.
type specContext struct {
	extension string
	// objectName is the Extension object's name (extension may be its
	// spec.name).
	objectName string
	namespace  string
	resolve    WebhookResolver
	client     outbound.Doer
	// syntaxOnly parses CEL hooks without type-checking them; the result
	// is for validation only and never loads.
	syntaxOnly bool
	// loading compiles for a load rather than for validation: an MCP
	// server's tools then come from mcpStatus, and platform decides what
	// spec.mcpServer may name.
	loading   bool
	platform  bool
	mcpStatus *v1alpha1.MCPServerStatus
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
		if why := DescriptionRefusal(string(t.Description)); why != "" {
			errs = append(errs, field.Invalid(p.Child("description"), string(t.Description), why))
		}
		var schema []byte
		if t.InputSchema != nil {
			schema = t.InputSchema.Raw
			if _, err := exthost.CompileInputSchema(schema); err != nil {
				errs = append(errs, field.Invalid(p.Child("inputSchema"), "(the schema)", err.Error()))
			}
		}
		tool := exthost.Tool{Name: name, Description: string(t.Description), ReadOnly: t.ReadOnly, InputSchema: schema,
			Traits: declaredTraits(&spec.Tools[i])}
		if t.Implementation != nil {
			svc, serr := compileImplementation(t.Implementation, p.Child("implementation"), sc)
			errs = append(errs, serr...)
			tool.Service = svc
		}
		out.tools = append(out.tools, tool)
	}

	if spec.MCPServer != nil {
		tools, merrs := sc.compileMCPServer(spec.MCPServer)
		errs = append(errs, merrs...)
		out.tools = append(out.tools, tools...)
	}

	hooks := map[string]bool{}
	for i := range spec.Hooks {
		p := path.Child("hooks").Index(i)
		decl := specHook(&spec.Hooks[i], p, sc)
		decl.RecordArguments = spec.RecordArguments
		h, herrs := exthost.CompileHook(decl, p, sc.extension, sc.client)
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
		if err := exthost.CheckMessageTemplate(m.Template); err != nil {
			errs = append(errs, field.Invalid(path.Child("messageTypes").Index(i).Child("template"), m.Template, err.Error()))
		}
		types[m.Type] = true
	}
	return out, errs
}

// specHook declares a hook of an Extension spec.
func specHook(in *v1alpha1.ExtensionHook, p *field.Path, sc specContext) exthost.HookDecl {
	d := exthost.HookDecl{Name: in.Name, Event: in.Event, TimeoutSeconds: in.TimeoutSeconds, SyntaxOnly: sc.syntaxOnly}
	if a := in.Approval; a != nil {
		d.Approval = &contract.HookApproval{ApproverGroups: slices.Clone(a.ApproverGroups), Route: string(a.Route),
			ExpirySeconds: a.ExpirySeconds, WaitSeconds: a.WaitSeconds}
	}
	if in.CEL != nil {
		d.CEL = &contract.CELHook{Expression: in.CEL.Expression, Message: in.CEL.Message}
	}
	if in.Match != nil {
		for _, t := range in.Match.Tools {
			d.Tools = append(d.Tools, string(t))
		}
	}
	if in.Webhook != nil {
		d.Webhook = func() (outbound.Target, *field.Error) {
			if ferr := checkPlatformEndpoint(sc.platform, p.Child("webhook", "service"), in.Webhook.Service.Scheme, in.Webhook.Service.CABundle); ferr != nil {
				return outbound.Target{}, ferr
			}
			url, err := sc.resolve(sc.namespace, in.Webhook.Service)
			if err != nil {
				return outbound.Target{}, field.Invalid(p.Child("webhook", "service"), in.Webhook.Service.Name, err.Error())
			}
			return outbound.Target{URL: url, CABundle: in.Webhook.Service.CABundle}, nil
		}
	}
	return d
}

// compileImplementation resolves a runnable tool's Service with the same
// resolver, and so the same rules, as a webhook hook's.
func compileImplementation(in *v1alpha1.ToolImplementation, p *field.Path, sc specContext) (*contract.ToolService, field.ErrorList) {
	var errs field.ErrorList
	timeout := in.TimeoutSeconds
	if timeout == 0 {
		timeout = int32(exthost.DefaultToolTimeout / time.Second)
	}
	if timeout < 1 || time.Duration(timeout)*time.Second > exthost.MaxToolTimeout {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), in.TimeoutSeconds, "must be between 1 and 300"))
	}
	if ferr := checkPlatformEndpoint(sc.platform, p.Child("service"), in.Service.Scheme, in.Service.CABundle); ferr != nil {
		errs = append(errs, ferr)
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
func specFactory(spec *v1alpha1.ExtensionSpec, sc specContext) exthost.Factory {
	return func(api exthost.API) error {
		c, errs := compileSpec(spec, field.NewPath("spec"), sc)
		if len(errs) > 0 {
			return exthost.Invalid(errs)
		}
		for _, t := range c.tools {
			api.RegisterTool(t)
		}
		for _, h := range c.hooks {
			api.On(h)
		}
		for _, m := range c.messageTypes {
			api.DeclareMessageType(exthost.MessageTypeDecl{Type: m.Type, InContext: m.InContext, Template: m.Template})
		}
		if c.promptGuide != "" {
			api.SetPromptGuide(c.promptGuide)
		}
		return nil
	}
}
