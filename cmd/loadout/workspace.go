package main

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
)

// workspacePlan is what one Workspace is resolved from, gathered from the
// manifests by the trust rules of DESIGN.md.
type workspacePlan struct {
	input    resources.Input
	outcomes []extensionOutcome
}

// planWorkspace gathers the input of a Workspace: its roots (refusing
// namespaces other than its own and the platform's), the objects of each root
// whose namespace loads data, its instructions, and the extensions of trusted
// root namespaces.
func planWorkspace(ws *v1alpha1.Workspace, set *objectSet, trust trustPolicy) (*workspacePlan, error) {
	roots, err := resources.WorkspaceRoots(ws, trust.platform)
	if err != nil {
		return nil, err
	}
	plan := &workspacePlan{input: resources.Input{
		Workspace:       contract.WorkspaceRef{Name: ws.Name, Namespace: ws.Namespace, Generation: ws.Generation},
		MaxContextBytes: ws.MaxContextBytes(),
	}}
	var exts []v1alpha1.Extension
	for _, r := range roots {
		level := trust.of(r.Namespace)
		if !resources.LoadsData(level) {
			plan.input.Roots = append(plan.input.Roots, resources.Root{Name: r.Name})
			continue
		}
		skills, err := inRoot(set.skills, r, func(o *v1alpha1.Skill) *metav1.ObjectMeta { return &o.ObjectMeta })
		if err != nil {
			return nil, fmt.Errorf("workspace %s/%s: root %q: selector: %w", ws.Namespace, ws.Name, r.Name, err)
		}
		// The same selector parsed above: it cannot fail below.
		templates, _ := inRoot(set.templates, r, func(o *v1alpha1.Template) *metav1.ObjectMeta { return &o.ObjectMeta })
		plan.input.Roots = append(plan.input.Roots, resources.RootFromObjects(r.Name, r.Namespace, skills, templates))
		found, _ := inRoot(set.extensions, r, func(o *v1alpha1.Extension) *metav1.ObjectMeta { return &o.ObjectMeta })
		for _, e := range found {
			if !resources.LoadsExtensions(level) {
				plan.outcomes = append(plan.outcomes, extensionOutcome{name: e.LogicalName(), namespace: e.Namespace, state: v1alpha1.ExtensionSkippedUntrusted,
					message: fmt.Sprintf("namespace %s is %s", e.Namespace, level)})
				continue
			}
			if !slices.ContainsFunc(exts, func(x v1alpha1.Extension) bool { return x.Namespace == e.Namespace && x.Name == e.Name }) {
				exts = append(exts, e)
			}
		}
	}
	if plan.input.Instructions, err = instructions(ws, set, trust); err != nil {
		return nil, err
	}
	for _, a := range ws.Spec.Activate {
		plan.input.Activate = append(plan.input.Activate, resources.Activation{Skill: string(a.Skill), Files: a.Files})
	}
	reg, outcomes := registryFromExtensions(ws.Spec.Tools, exts)
	plan.input.Registry = reg
	plan.outcomes = append(plan.outcomes, outcomes...)
	return plan, nil
}

// instructions resolves spec.instructions in order. Sources in a namespace
// whose trust level ignores project data are left out.
func instructions(ws *v1alpha1.Workspace, set *objectSet, trust trustPolicy) ([]resources.Instruction, error) {
	var out []resources.Instruction
	for i, src := range ws.Spec.Instructions {
		field := fmt.Sprintf("spec.instructions[%d]", i)
		if src.ConfigMapKeyRef == nil {
			if resources.LoadsData(trust.of(ws.Namespace)) {
				out = append(out, resources.Instruction{Body: src.Inline, Origin: resources.Origin{
					Root: "workspace", Namespace: ws.Namespace, Object: ws.Name + "/" + field}})
			}
			continue
		}
		ref := src.ConfigMapKeyRef
		ns := cmp.Or(ref.Namespace, ws.Namespace)
		if err := resources.CheckNamespacePermitted(ws, ns, trust.platform, field+".configMapKeyRef.namespace"); err != nil {
			return nil, err
		}
		if !resources.LoadsData(trust.of(ns)) {
			continue
		}
		key := cmp.Or(ref.Key, "AGENTS.md")
		body, ok := set.configMaps[ns+"/"+ref.Name].Data[key]
		if !ok {
			return nil, &resources.InstructionsNotFoundError{Workspace: ws.Namespace + "/" + ws.Name, Field: field + ".configMapKeyRef", Namespace: ns, Name: ref.Name, Key: key}
		}
		out = append(out, resources.Instruction{Body: body, Origin: resources.Origin{Root: "configmap", Namespace: ns, Object: ref.Name + "/" + key}})
	}
	return out, nil
}
