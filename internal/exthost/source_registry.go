package exthost

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// NewHostFromRegistry rebuilds a Host from a published registry: what hostd
// does with manifest.json, so agents get the same hook runtime as the
// controller. Built-in tools and the deny list come from the registry; every
// extension in it was trusted by the controller that published it. The
// outcomes say whether each extension loaded; one that does not (a CEL
// expression this build cannot compile) is left out whole.
func NewHostFromRegistry(ctx context.Context, reg contract.Registry, ws WorkspaceInfo, client outbound.Doer) (*Host, []Outcome) {
	var builtin []contract.Tool
	for _, t := range reg.Tools {
		if t.Builtin {
			builtin = append(builtin, t)
		}
	}
	ws.Sandboxed = SandboxHolds(reg.Sandbox)
	ws.EveryAgentSandboxed = ws.Sandboxed && reg.Sandbox.AgentsUnderLoadoutSandbox
	h := NewHost(Options{Builtin: builtin, Deny: reg.Deny, Workspace: ws, Outbound: client})
	var outcomes []Outcome
	for _, src := range RegistrySources(reg) {
		outcomes = append(outcomes, h.Load(ctx, src, true))
	}
	return h, outcomes
}

// RegistrySources splits a published registry back into one Source per
// extension, in commit order. Registries without the extensions list (older
// publishers) are ordered by first appearance, hooks first, because hook
// order is the one that changes behaviour.
func RegistrySources(reg contract.Registry) []Source {
	var out []Source
	for _, id := range registryOrder(reg) {
		out = append(out, Source{ID: id, Namespace: namespaceIn(reg, id), Import: registryImport(reg, id), Imposed: imposedIn(reg, id)})
	}
	return out
}

// imposedIn reports whether the registry marks extension id's hooks imposed:
// the publisher marks every hook of an imposed extension, so one marked hook
// makes the whole extension run last again.
func imposedIn(reg contract.Registry, id string) bool {
	return slices.ContainsFunc(reg.Hooks, func(h contract.Hook) bool { return h.Extension == id && h.Imposed })
}

// namespaceIn is the namespace the registry gives extension id's hooks
// (the publisher marks every hook of an extension alike); "" when none
// does.
func namespaceIn(reg contract.Registry, id string) string {
	for _, h := range reg.Hooks {
		if h.Extension == id && h.Namespace != "" {
			return h.Namespace
		}
	}
	return ""
}

func registryOrder(reg contract.Registry) []string {
	ids := slices.Clone(reg.Extensions)
	add := func(id string) {
		if id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, h := range reg.Hooks {
		add(h.Extension)
	}
	for _, t := range reg.Tools {
		if !t.Builtin {
			add(t.Extension)
		}
	}
	for _, m := range reg.MessageTypes {
		add(m.Extension)
	}
	for _, g := range reg.PromptGuides {
		add(g.Extension)
	}
	return ids
}

func registryImport(reg contract.Registry, id string) ImportFunc {
	return func(_ context.Context, env Env) (Factory, error) {
		var hooks []Hook
		var errs []error
		for _, ch := range reg.Hooks {
			if ch.Extension != id {
				continue
			}
			h, err := hookFromContract(ch, env.Outbound)
			if err != nil {
				errs = append(errs, fmt.Errorf("hook %q: %w", ch.Name, err))
			}
			hooks = append(hooks, h)
		}
		if len(errs) > 0 {
			return nil, &InvalidError{Errs: errs}
		}
		return func(api API) error {
			for _, t := range reg.Tools {
				if !t.Builtin && t.Extension == id {
					api.RegisterTool(Tool{Name: t.Name, Description: t.Description, ReadOnly: t.ReadOnly, InputSchema: t.InputSchema, Service: t.Service, MCP: t.MCP,
						Traits: t.ToolTraits})
				}
			}
			for _, h := range hooks {
				api.On(h)
			}
			for _, m := range reg.MessageTypes {
				if m.Extension == id {
					api.DeclareMessageType(MessageTypeDecl{Type: m.Type, InContext: m.InContext, Template: m.Template})
				}
			}
			for _, g := range reg.PromptGuides {
				if g.Extension == id {
					api.SetPromptGuide(g.Text)
				}
			}
			return nil
		}, nil
	}
}

// hookFromContract compiles a published hook with the spec's compiler
// (CompileHook); only where a webhook's target comes from differs.
func hookFromContract(ch contract.Hook, client outbound.Doer) (Hook, error) {
	d := HookDecl{Name: ch.Name, Event: vocab.HookEvent(ch.Event), Tools: slices.Clone(ch.Tools), TimeoutSeconds: ch.TimeoutSeconds,
		Approval: ch.Approval.Clone(), RecordArguments: ch.RecordArguments}
	if ch.CEL != nil {
		d.CEL = &contract.CELHook{Expression: ch.CEL.Expression, Message: ch.CEL.Message}
	}
	p := field.NewPath("hooks").Key(ch.Name)
	if ch.Webhook != nil {
		d.Webhook = func() (outbound.Target, *field.Error) {
			if ch.Webhook.URL == "" {
				return outbound.Target{}, field.Required(p.Child("webhook", "url"), "the publishing controller resolves it")
			}
			target := outbound.Target{URL: ch.Webhook.URL, CABundle: ch.Webhook.CABundle}
			if ch.Imposed {
				if ferr := checkImposedWebhook(p.Child("webhook"), target); ferr != nil {
					return outbound.Target{}, ferr
				}
			}
			return target, nil
		}
	}
	h, errs := CompileHook(d, p, ch.Extension, client)
	// The publishing controller resolved and checked the params.
	h.Params = cloneParams(ch.Params)
	return h, errs.ToAggregate()
}
