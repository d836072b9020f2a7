package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
)

// extensionOutcome is what became of one extension for a Workspace.
type extensionOutcome struct {
	name, namespace string
	state           v1alpha1.ExtensionLoadState
	message         string
}

// defaultHookTimeoutSeconds is the Extension API default (SPEC R-HK-7).
const defaultHookTimeoutSeconds = 10

// registryFromExtensions is preview's tool registry: the built-in tools, then
// the declared tools, hooks, message types and prompt guides of each trusted
// extension, in the order given. It mirrors the commit checks of SPEC R-EXT-2
// on declarations only: an extension whose id is taken, or whose tools repeat
// or collide with a registered tool, is rejected whole. Denied tools stay out
// of the registry whoever registered them (R-EXT-5). Nothing is fetched from
// an extension's source service: preview shows what the manifests declare.
// This is the one place to swap for internal/exthost's loader.
func registryFromExtensions(tools *v1alpha1.WorkspaceTools, exts []v1alpha1.Extension) (contract.Registry, []extensionOutcome) {
	var builtin, deny []v1alpha1.ToolName
	if tools != nil {
		builtin, deny = tools.Builtin, tools.Deny
	}
	reg := contract.Registry{}
	taken := map[string]string{} // tool → who registered it
	for _, b := range builtin {
		taken[string(b)] = "built-in tools"
		if !slices.Contains(deny, b) {
			reg.Tools = append(reg.Tools, contract.Tool{Name: string(b), Builtin: true})
		}
	}
	var outcomes []extensionOutcome
	ids := map[string]bool{}
	for _, e := range exts {
		id := e.LogicalName()
		out := extensionOutcome{name: id, namespace: e.Namespace, state: v1alpha1.ExtensionLoaded}
		if err := commitCheck(id, e.Spec.Tools, ids, taken); err != nil {
			out.state, out.message = v1alpha1.ExtensionRejected, err.Error()
			outcomes = append(outcomes, out)
			continue
		}
		ids[id] = true
		for _, t := range e.Spec.Tools {
			taken[string(t.Name)] = "extension " + id
			if slices.Contains(deny, t.Name) {
				continue
			}
			var schema json.RawMessage
			if t.InputSchema != nil {
				schema = t.InputSchema.Raw
			}
			reg.Tools = append(reg.Tools, contract.Tool{Name: string(t.Name), Description: string(t.Description), Extension: id, ReadOnly: t.ReadOnly, InputSchema: schema})
		}
		for _, h := range e.Spec.Hooks {
			reg.Hooks = append(reg.Hooks, hookEntry(id, e.Namespace, h))
		}
		for _, m := range e.Spec.MessageTypes {
			reg.MessageTypes = append(reg.MessageTypes, contract.MessageType{Extension: id, Type: m.Type, InContext: m.InContext})
		}
		if e.Spec.PromptGuide != "" {
			reg.PromptGuides = append(reg.PromptGuides, contract.PromptGuide{Extension: id, Text: e.Spec.PromptGuide})
		}
		outcomes = append(outcomes, out)
	}
	return reg, outcomes
}

// commitCheck is R-EXT-2's commit check over declared tools.
func commitCheck(id string, tools []v1alpha1.ExtensionTool, ids map[string]bool, taken map[string]string) error {
	if ids[id] {
		return fmt.Errorf("extension id %q is already loaded", id)
	}
	seen := map[string]bool{}
	for i, t := range tools {
		if seen[string(t.Name)] {
			return fmt.Errorf("spec.tools[%d].name: tool %q is declared twice", i, t.Name)
		}
		seen[string(t.Name)] = true
		if by, ok := taken[string(t.Name)]; ok {
			return fmt.Errorf("spec.tools[%d].name: tool %q is already registered by %s", i, t.Name, by)
		}
	}
	return nil
}

// hookEntry converts a declared hook; a webhook's URL points at the Service of
// the extension's own namespace, the only place Loadout calls.
func hookEntry(id, namespace string, h v1alpha1.ExtensionHook) contract.Hook {
	out := contract.Hook{Extension: id, Name: h.Name, Event: string(h.Event), TimeoutSeconds: cmp.Or(h.TimeoutSeconds, defaultHookTimeoutSeconds)}
	if h.Match != nil {
		for _, t := range h.Match.Tools {
			out.Tools = append(out.Tools, string(t))
		}
	}
	if h.CEL != nil {
		out.CEL = &contract.CELHook{Expression: h.CEL.Expression, Message: h.CEL.Message}
	}
	if h.Webhook != nil {
		s := h.Webhook.Service
		out.Webhook = &contract.WebhookHook{URL: fmt.Sprintf("https://%s.%s.svc:%d%s", s.Name, namespace, cmp.Or(s.Port, 443), cmp.Or(s.Path, "/"))}
	}
	return out
}
