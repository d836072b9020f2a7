package exthost

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

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
		out = append(out, Source{ID: id, Import: registryImport(reg, id)})
	}
	return out
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
					api.RegisterTool(Tool{Name: t.Name, Description: t.Description, ReadOnly: t.ReadOnly, InputSchema: t.InputSchema, Service: t.Service})
				}
			}
			for _, h := range hooks {
				api.On(h)
			}
			for _, m := range reg.MessageTypes {
				if m.Extension == id {
					api.RegisterMessageType(m.Type, m.InContext)
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

func hookFromContract(ch contract.Hook, client outbound.Doer) (Hook, error) {
	h := Hook{Name: ch.Name, Event: eventOf(ch.Event), Tools: slices.Clone(ch.Tools), Timeout: time.Duration(ch.TimeoutSeconds) * time.Second}
	if h.Event != eventBefore && h.Event != eventAfter {
		return h, fmt.Errorf("unknown event %q", ch.Event)
	}
	if ch.TimeoutSeconds < 0 || h.Timeout > MaxTimeout {
		return h, fmt.Errorf("timeoutSeconds %d is outside 1..30", ch.TimeoutSeconds)
	}
	var err error
	switch {
	case (ch.CEL == nil) == (ch.Webhook == nil):
		err = errors.New("exactly one of cel or webhook must be set")
	case ch.CEL != nil:
		h.Handler, err = CompileCEL(h.Event, ch.CEL.Expression, ch.CEL.Message)
	case ch.Webhook.URL == "":
		err = errors.New("webhook has no url")
	default:
		h.Handler = NewWebhook(outbound.Target{URL: ch.Webhook.URL, CABundle: ch.Webhook.CABundle}, ch.Extension, ch.Name, client)
	}
	return h, err
}
