package workspace

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/sandboxpolicy"
)

// Objects is read access to what a Workspace may see. The controller serves it
// from its informer cache, the CLI from parsed manifests. A namespace that does
// not exist has no objects and no labels.
type Objects interface {
	Skills(ctx context.Context, namespace string) ([]v1alpha1.Skill, error)
	Templates(ctx context.Context, namespace string) ([]v1alpha1.Template, error)
	Extensions(ctx context.Context, namespace string) ([]v1alpha1.Extension, error)
	NamespaceLabels(ctx context.Context, namespace string) (map[string]string, error)
	// ConfigMapData returns the data and labels of a ConfigMap and whether it
	// exists.
	ConfigMapData(ctx context.Context, namespace, name string) (data, labels map[string]string, ok bool, err error)
}

// Candidate is an extension visible to the Workspace, before loading.
type Candidate struct {
	Extension *v1alpha1.Extension
	// Trusted is true when the extension's namespace lets extensions load.
	Trusted bool
	// Enforced is true for a platform extension imposed on the Workspace by
	// its namespace selector, whatever the Workspace's roots say.
	Enforced bool
	// Platform is true for an extension of a platform namespace, imposed or
	// offered: it may name MCP servers a tenant's may not.
	Platform bool
	// Params are the extension's paramRef resolved for the Workspace; nil
	// without one. ParamsErr says why they cannot be used.
	Params    *contract.HookParams
	ParamsErr error
	// Prepared is the extension through trust, import and factory, once a
	// HostLoader has loaded it: the platform's imposed candidates carry it
	// from PlatformPolicyOf into every Workspace's plan, whose load then
	// only commits them (exthost.Prepared).
	Prepared *exthost.Prepared
}

// Plan is everything gathered for one Workspace.
type Plan struct {
	// Input is the resolution input, with an empty Registry: the registry comes
	// from loading Extensions.
	Input resources.Input
	// Extensions in load order: platform namespaces first, then the other root
	// namespaces in root order, each ordered by extension id.
	Extensions []Candidate
	// Builtin and Deny are the Workspace's tool policy.
	Builtin []contract.Tool
	Deny    []string
	// Sandbox is the Workspace's effective sandbox (sandboxOf); nil when
	// nothing declares one.
	Sandbox *contract.Sandbox
	// SkillSigners are the Workspace's signer requirements
	// (skillSignersOf); nil when nothing declares one.
	SkillSigners []contract.SignerRequirement
	// UnlabelledPlatform lists, in read order, the platform namespaces the
	// Workspace reads that carry no valid loadout.dev/trust label: nothing of
	// them loads (Policy.TrustOf). The Workspace's status says so.
	UnlabelledPlatform []string
}

// Gather reads what the Workspace reads (ReadsOf) through objs under the
// trust policy, after the platform's policy for its namespace (platform,
// from PlatformPolicyOf), whose imposed extensions load first whatever the
// roots say. A root or instructions reference outside the own and platform
// namespaces is a *RootNotPermittedError; a missing instructions ConfigMap or
// key is an *InstructionsNotFoundError.
func Gather(ctx context.Context, ws *v1alpha1.Workspace, objs Objects, pol Policy, platform *Platform) (*Plan, error) {
	reads := ReadsOf(ws, pol)
	if reads.Refused != nil {
		return nil, reads.Refused
	}
	plan := &Plan{Input: resources.Input{
		Workspace:       contract.WorkspaceRef{Name: ws.Name, Namespace: ws.Namespace},
		MaxContextBytes: ws.MaxContextBytes(),
		PlatformPolicy:  platform.Digest(),
	}, UnlabelledPlatform: slices.Clone(platform.UnlabelledPlatform)}
	trust := func(ns string) (vocab.TrustLevel, error) {
		l, err := objs.NamespaceLabels(ctx, ns)
		if err != nil {
			return "", fmt.Errorf("reading namespace %s: %w", ns, err)
		}
		if pol.UnlabelledPlatform(ns, l) && !slices.Contains(plan.UnlabelledPlatform, ns) {
			plan.UnlabelledPlatform = append(plan.UnlabelledPlatform, ns)
		}
		return pol.TrustOf(ns, l), nil
	}
	var found []Candidate
	for i, r := range reads.Roots {
		level, err := trust(r.Namespace)
		if err != nil {
			return nil, err
		}
		root, exts, err := gatherRoot(ctx, objs, r, level, pol.isPlatform(r.Namespace))
		if err != nil {
			return nil, fmt.Errorf("workspace %s/%s: spec.roots[%d] (%s): %w", ws.Namespace, ws.Name, i, r.Name, err)
		}
		plan.Input.Roots = append(plan.Input.Roots, root)
		for _, e := range exts {
			same := func(c Candidate) bool { return c.Extension.Namespace == e.Namespace && c.Extension.Name == e.Name }
			if !slices.ContainsFunc(platform.Extensions, same) && !slices.ContainsFunc(found, same) {
				found = append(found, Candidate{Extension: e, Trusted: LoadsExtensions(level), Platform: pol.isPlatform(e.Namespace)})
			}
		}
	}
	// The platform's candidates come with their parameters resolved; only
	// what the roots bring is read here.
	if err := resolveParams(ctx, ws.Namespace, objs, found); err != nil {
		return nil, err
	}
	plan.Extensions = loadOrder(append(slices.Clone(platform.Extensions), found...), pol.PlatformNamespaces)
	// Provenance (docs/context-contract.md): text of a platform namespace is
	// the platform's, and an extension's prompt guide is its namespace's (the
	// first in load order takes an id, as at commit).
	plan.Input.PlatformNamespaces = slices.Clone(pol.PlatformNamespaces)
	plan.Input.ExtensionNamespaces = make(map[string]string, len(plan.Extensions))
	for _, c := range plan.Extensions {
		if id := c.Extension.LogicalName(); plan.Input.ExtensionNamespaces[id] == "" {
			plan.Input.ExtensionNamespaces[id] = c.Extension.Namespace
		}
	}
	instructions, err := gatherInstructions(ctx, ws, reads, objs, trust)
	if err != nil {
		return nil, err
	}
	plan.Input.Instructions = instructions
	for _, a := range ws.Spec.Activate {
		plan.Input.Activate = append(plan.Input.Activate, resources.Activation{Skill: string(a.Skill), Files: a.Files})
	}
	if t := ws.Spec.Tools; t != nil {
		for _, b := range t.Builtin {
			plan.Builtin = append(plan.Builtin, contract.Tool{Name: string(b), Builtin: true})
		}
		for _, d := range t.Deny {
			plan.Deny = append(plan.Deny, string(d))
		}
	}
	// Denied tools are policy an extension declares (docs/operations.md,
	// "Platform policy"); the Workspace's own list above only adds to them.
	for _, c := range plan.Extensions {
		if c.Trusted {
			for _, d := range c.Extension.Spec.DeniedTools {
				plan.Deny = append(plan.Deny, string(d))
			}
		}
	}
	plan.Sandbox = sandboxOf(ws, plan.Extensions)
	if plan.SkillSigners, err = skillSignersOf(ws, platform.SkillSigners, plan.Extensions); err != nil {
		return nil, err
	}
	return plan, nil
}

// sandboxOf is the effective sandbox (internal/sandboxpolicy): the trusted
// imposed extensions' declarations, narrowed by every other trusted
// extension's and the Workspace's own. An untrusted extension declares
// nothing, as it denies nothing.
func sandboxOf(ws *v1alpha1.Workspace, exts []Candidate) *contract.Sandbox {
	platform, tenant := platformSandboxes(exts), []*contract.Sandbox{sandboxpolicy.FromAPI(ws.Spec.Sandbox)}
	for _, c := range exts {
		if c.Trusted && !c.Enforced {
			tenant = append(tenant, sandboxpolicy.FromAPI(c.Extension.Spec.Sandbox))
		}
	}
	return sandboxpolicy.Effective(platform, tenant)
}

// platformSandboxes are the sandboxes the trusted imposed extensions declare.
func platformSandboxes(exts []Candidate) []*contract.Sandbox {
	var out []*contract.Sandbox
	for _, c := range exts {
		if c.Trusted && c.Enforced {
			out = append(out, sandboxpolicy.FromAPI(c.Extension.Spec.Sandbox))
		}
	}
	return out
}

// Offered reports whether a platform extension is offered rather than
// imposed: marked optional, and carrying no policy. One that carries hooks,
// denied tools, a sandbox, skill signers or a manifest source (which may add hooks) is imposed even if
// marked optional: the API refuses that combination, and manifests read by
// `loadout preview` are not validated by the API server.
func Offered(e *v1alpha1.Extension) bool {
	return e.Spec.Optional && len(e.Spec.Hooks) == 0 && len(e.Spec.DeniedTools) == 0 && e.Spec.Sandbox == nil && e.Spec.SkillSigners == nil && e.Spec.Source == nil
}

// AppliesTo reports whether a platform extension that is imposed applies to
// the Workspaces of a namespace with these labels.
func AppliesTo(e *v1alpha1.Extension, namespaceLabels map[string]string) bool {
	if e.Spec.NamespaceSelector == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(e.Spec.NamespaceSelector)
	if err != nil {
		return true
	}
	return sel.Matches(labels.Set(namespaceLabels))
}

// gatherRoot reads one root's objects. An untrusted namespace contributes an
// empty root: its skills and templates are ignored (rule R-EXT-4). Its
// extensions are still returned, only to be reported as SkippedUntrusted:
// loading decides trust before anything of them is read or contacted. Of a
// platform root, only the offered extensions come through the root: the
// imposed ones come through the namespace's Platform, whatever the root selects.
func gatherRoot(ctx context.Context, objs Objects, r v1alpha1.WorkspaceRoot, level vocab.TrustLevel, platform bool) (resources.Root, []*v1alpha1.Extension, error) {
	sel, err := rootSelector(r)
	if err != nil {
		// The CRD schema cannot check operators and values: a broken
		// selector is the user's to fix, so it carries a reason (the
		// controller retries reasonless errors as transient).
		return resources.Root{}, nil, &resources.InvalidResourceError{Kind: "root", Origin: resources.Origin{Root: r.Name, Namespace: r.Namespace},
			Field: "selector", Message: err.Error()}
	}
	extensions, err := objs.Extensions(ctx, r.Namespace)
	if err != nil {
		return resources.Root{}, nil, err
	}
	var found []*v1alpha1.Extension
	for _, e := range selected(extensions, sel, func(o *v1alpha1.Extension) map[string]string { return o.Labels }) {
		if platform && !Offered(&e) {
			continue
		}
		found = append(found, &e)
	}
	if !LoadsData(level) {
		return resources.Root{Name: r.Name}, found, nil
	}
	skills, err := objs.Skills(ctx, r.Namespace)
	if err != nil {
		return resources.Root{}, nil, err
	}
	templates, err := objs.Templates(ctx, r.Namespace)
	if err != nil {
		return resources.Root{}, nil, err
	}
	root := RootFromObjects(r.Name, r.Namespace,
		selected(skills, sel, func(o *v1alpha1.Skill) map[string]string { return o.Labels }),
		selected(templates, sel, func(o *v1alpha1.Template) map[string]string { return o.Labels }))
	return root, found, nil
}

func selected[T any](items []T, sel labels.Selector, labelsOf func(*T) map[string]string) []T {
	if sel.Empty() {
		return items
	}
	var out []T
	for i := range items {
		if sel.Matches(labels.Set(labelsOf(&items[i]))) {
			out = append(out, items[i])
		}
	}
	return out
}

// loadOrder puts platform extensions first. Extension ids do not follow layer
// precedence: a project extension may neither shadow nor pre-empt a platform
// policy of the same id (the later one is rejected at commit, rule R-EXT-2).
// Load order is not run order: the hooks of imposed platform extensions run
// after every other hook of their event (HostLoader marks them imposed;
// docs/hooks.md, "Order"), so the platform judges last.
func loadOrder(exts []Candidate, platform []string) []Candidate {
	rank := func(c Candidate) int {
		if i := slices.Index(platform, c.Extension.Namespace); i >= 0 {
			return i
		}
		return len(platform)
	}
	slices.SortStableFunc(exts, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)),
			cmp.Compare(a.Extension.LogicalName(), b.Extension.LogicalName()),
			cmp.Compare(a.Extension.Namespace, b.Extension.Namespace),
			cmp.Compare(a.Extension.Name, b.Extension.Name))
	})
	return exts
}

// gatherInstructions resolves spec.instructions in order. Sources in a
// namespace whose trust level ignores project data are left out.
func gatherInstructions(ctx context.Context, ws *v1alpha1.Workspace, reads Reads, objs Objects, trust func(string) (vocab.TrustLevel, error)) ([]resources.Instruction, error) {
	var out []resources.Instruction
	for _, src := range reads.Instructions {
		level, err := trust(src.Namespace)
		if err != nil {
			return nil, err
		}
		if !LoadsData(level) {
			continue
		}
		if src.ConfigMap == "" {
			out = append(out, resources.Instruction{Body: src.Inline, Origin: resources.Origin{
				Root: "workspace", Namespace: ws.Namespace, Object: ws.Name + "/" + src.Field}})
			continue
		}
		data, labels, ok, err := objs.ConfigMapData(ctx, src.Namespace, src.ConfigMap)
		if err != nil {
			return nil, fmt.Errorf("reading ConfigMap %s/%s for %s: %w", src.Namespace, src.ConfigMap, src.Field, err)
		}
		body, hasKey := data[src.Key]
		// A platform ConfigMap must opt in; one that has not is reported
		// exactly like a missing one, so its existence does not leak.
		optedIn := src.Namespace == ws.Namespace || labels[vocab.InstructionsLabel] == "true"
		if !ok || !hasKey || !optedIn {
			return nil, &InstructionsNotFoundError{Workspace: ws.Namespace + "/" + ws.Name, Field: src.Field + ".configMapKeyRef",
				Namespace: src.Namespace, Name: src.ConfigMap, Key: src.Key}
		}
		out = append(out, resources.Instruction{Body: body, Origin: resources.Origin{Root: "configmap", Namespace: src.Namespace, Object: src.ConfigMap + "/" + src.Key}})
	}
	return out, nil
}
