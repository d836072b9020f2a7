package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skilldir"
	"github.com/loadout-dev/loadout/internal/workspace"
)

// previewOptions are the flags of `loadout preview`.
type previewOptions struct {
	files        []string
	roots        []string
	output       string
	namespace    string
	platform     []string
	defaultTrust string
	lastGood     []string
	outDir       string
	// directory-root mode only
	workspace string
	activate  []string
	strict    bool
	truncate  bool
	maxBytes  int64
}

func newPreviewCommand() *cobra.Command {
	o := &previewOptions{}
	cmd := &cobra.Command{
		Use:   "preview (-f DIR|FILE... | --root DIR...)",
		Short: "Print the context ConfigMap a Workspace would publish",
		Long: `Print, for each Workspace, the ConfigMap the controller would publish.

With -f, read Kubernetes manifests (multi-document YAML or JSON; a directory
means its *.yaml, *.yml and *.json files): Namespaces with their
loadout.dev/trust label, ConfigMaps holding instructions, Skills, Templates,
Extensions and Workspaces. The controller's trust rules apply: a namespace's
loadout.dev/trust label says untrusted (its resources are ignored),
restricted (skills, templates and instructions load, extensions do not) or
trusted. Without a label, a project namespace gets --default-trust and a
platform namespace is untrusted: preview warns on stderr that no Workspace
gets its platform policy. A platform namespace with no Namespace manifest is
taken as installed, labelled trusted, with a warning. With --strict either
warning is an error. A Workspace's roots
default to [its own namespace, the platform namespace]; a root in any other
namespace fails with RootNotPermitted. Extensions load through the same host
as in the controller (platform extensions first). A rejected trusted
extension fails the preview (ExtensionRejected), as the controller keeps the
last good context for it; a trusted service-backed extension is rejected
too, because preview contacts no Service.

A Workspace whose own input is invalid fails the preview, unless
--last-good gives the contexts the cluster has published (the ConfigMaps as
'kubectl get configmap -o yaml' prints them): preview then prints what the
controller publishes in its place, byte for byte: the tenant's last good
content under the platform's current policy (held), or, with no good
content to keep (no ConfigMap of the Workspace's name and label among them),
the platform's policy alone (policy only). stderr says which. A rejected
imposed platform extension still fails: the cluster changes nothing then.

With --root, resolve directory roots in the seed layout (AGENTS.md, skills/,
templates/<name>.md), first root first, as one Workspace. Skills are found
below skills/ as the Pi agent finds them (see 'loadout import --help').

Output is deterministic: the same input prints the same bytes.`,
		Example: `  loadout preview -f config/samples
  loadout preview -f config/samples -o json
  kubectl get configmap -n team-a dev-context -o yaml > last-good.yaml
  loadout preview -f config/samples --last-good last-good.yaml
  loadout preview --root ./project --root ~/.agents --activate review=checklist.md`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&o.files, "filename", "f", nil, "manifest file or directory (repeatable)")
	f.StringArrayVar(&o.roots, "root", nil, "directory root in the seed layout, in precedence order (repeatable)")
	f.StringVarP(&o.output, "output", "o", outputYAML, "output format: yaml or json")
	f.StringVarP(&o.namespace, "namespace", "n", "default", "namespace of objects that have none")
	f.StringSliceVar(&o.platform, "platform-namespace", []string{"loadout-system"}, "platform namespaces (trusted when labelled, or when no Namespace manifest is given)")
	f.StringVar(&o.outDir, "out-dir", "", "write each context's keys as files into DIR/NAMESPACE/WORKSPACE (what 'loadout hostd --context-dir' reads) instead of printing the ConfigMaps")
	f.StringArrayVar(&o.lastGood, "last-good", nil, "-f mode: published context ConfigMaps (file or directory, repeatable): print the held or policy-only context the cluster publishes for a Workspace whose input is invalid")
	f.StringVar(&o.defaultTrust, "default-trust", string(vocab.TrustRestricted), "trust of project namespaces without a loadout.dev/trust label: untrusted, restricted or trusted")
	f.StringVar(&o.workspace, "workspace", "preview", "--root mode: Workspace name")
	f.StringArrayVar(&o.activate, "activate", nil, "--root mode: activate SKILL or SKILL=FILE,FILE... (repeatable)")
	f.BoolVar(&o.strict, "strict", false, "warnings are errors: -f mode, a platform namespace missing from the manifests or without a valid loadout.dev/trust label; --root mode, a skill name breaking the Agent Skills rules")
	f.BoolVar(&o.truncate, "truncate-descriptions", false, "--root mode: cut a skill description over 1,024 characters to 1,024, with a warning, instead of skipping the skill")
	f.Int64Var(&o.maxBytes, "max-context-bytes", vocab.DefaultMaxContextBytes, "--root mode: context budget in bytes (0: unlimited)")
	cmd.MarkFlagsMutuallyExclusive("filename", "root")
	cmd.MarkFlagsOneRequired("filename", "root")
	return cmd
}

func (o *previewOptions) run(stdout, stderr io.Writer) error {
	var cms []configMap
	var err error
	if len(o.files) > 0 {
		cms, err = o.fromManifests(stderr)
	} else {
		cms, err = o.fromRoots(stderr)
	}
	if err != nil {
		return err
	}
	if o.outDir != "" {
		return writeContextDirs(o.outDir, cms, stderr)
	}
	return writeConfigMaps(stdout, o.output, cms)
}

// writeContextDirs writes each context's keys as files into
// dir/NAMESPACE/WORKSPACE: the directory a mounted context ConfigMap is, so
// `loadout hostd --context-dir` serves it without a cluster.
func writeContextDirs(dir string, cms []configMap, stderr io.Writer) error {
	for _, cm := range cms {
		wsDir := filepath.Join(dir, *cm.Namespace, cm.Labels[vocab.WorkspaceLabel])
		if err := os.MkdirAll(wsDir, 0o755); err != nil {
			return err
		}
		for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
			if err := os.WriteFile(filepath.Join(wsDir, key), []byte(cm.Data[key]), 0o644); err != nil { //nolint:gosec // the context is what agents read
				return err
			}
		}
		fmt.Fprintf(stderr, "wrote the context of Workspace %s/%s (%s) into %s\n", *cm.Namespace, cm.Labels[vocab.WorkspaceLabel], cm.Annotations[vocab.ContextHashAnnotation], wsDir)
	}
	return nil
}

// fromManifests publishes every Workspace of the manifests, in namespace/name
// order. The first failing Workspace is an error naming it.
func (o *previewOptions) fromManifests(stderr io.Writer) ([]configMap, error) {
	def := vocab.TrustLevel(o.defaultTrust)
	if !slices.Contains([]vocab.TrustLevel{vocab.TrustUntrusted, vocab.TrustRestricted, vocab.TrustTrusted}, def) {
		return nil, fmt.Errorf("--default-trust %q: must be untrusted, restricted or trusted", o.defaultTrust)
	}
	set, err := readManifests(o.files, o.namespace, stderr)
	if err != nil {
		return nil, err
	}
	if len(set.workspaces) == 0 {
		return nil, errors.New("no Workspace in the manifests")
	}
	policy := workspace.Policy{PlatformNamespaces: o.platform, DefaultTrust: def}
	if err := checkPlatformNamespaces(set, policy, o.strict, stderr); err != nil {
		return nil, err
	}
	slices.SortFunc(set.workspaces, func(a, b v1alpha1.Workspace) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	var lastGood map[string]corev1.ConfigMap
	if len(o.lastGood) > 0 {
		published, err := readManifests(o.lastGood, o.namespace, stderr)
		if err != nil {
			return nil, fmt.Errorf("--last-good: %w", err)
		}
		lastGood = published.configMaps
	}
	ctx := context.Background()
	platforms := map[string]*workspace.Platform{} // once per namespace, as the cluster computes it
	var cms []configMap
	for i := range set.workspaces {
		ws := &set.workspaces[i]
		platform := platforms[ws.Namespace]
		if platform == nil {
			if platform, err = workspace.PlatformPolicyOf(ctx, ws.Namespace, set, policy, previewLoader); err != nil {
				return nil, fmt.Errorf("namespace %s: the platform's policy: %w", ws.Namespace, err)
			}
			platforms[ws.Namespace] = platform
		}
		res, err := workspace.Resolve(ctx, ws, set, policy, platform, previewLoader)
		if err != nil {
			return nil, fmt.Errorf("workspace %s/%s: %w", ws.Namespace, ws.Name, err)
		}
		for _, x := range res.Extensions {
			fmt.Fprintf(stderr, "workspace %s/%s: extension %s/%s: %s", ws.Namespace, ws.Name, x.Namespace, x.Extension, x.State)
			if x.Message != "" {
				fmt.Fprintf(stderr, ": %s", x.Message)
			}
			fmt.Fprintln(stderr)
		}
		cm, err := clusterPublishes(ctx, ws, res, set, policy, platform, lastGood, stderr)
		if err != nil {
			return nil, err
		}
		cms = append(cms, cm)
	}
	return cms, nil
}

// clusterPublishes is what the cluster publishes for ws: its resolution, or, for
// input of the tenant's that is invalid and with --last-good given, the held
// or policy-only context workspace.Decide chooses, as the controller does.
func clusterPublishes(ctx context.Context, ws *v1alpha1.Workspace, res *workspace.Resolution, set *objectSet, policy workspace.Policy,
	platform *workspace.Platform, lastGood map[string]corev1.ConfigMap, stderr io.Writer) (configMap, error) {
	f := res.Failure
	if f != nil && (lastGood == nil || !workspace.NeedsLastGood(res, platform)) {
		// The controller would keep the last good context (or, without
		// --last-good, preview cannot know it): nothing to print that the
		// cluster would publish.
		return nil, fmt.Errorf("workspace %s/%s: %s: %s: %w", ws.Namespace, ws.Name, f.Phase, f.Reason, f)
	}
	var tenant workspace.Tenant
	var last *workspace.LastGood
	if f != nil {
		var err error
		if tenant, err = workspace.TenantPolicy(ctx, ws, set, policy); err != nil {
			return nil, fmt.Errorf("workspace %s/%s: %w", ws.Namespace, ws.Name, err)
		}
		// Only the Workspace's own context counts, as in the cluster (which
		// checks the owner; a manifest from Git has no UID to check).
		if cm, ok := lastGood[ws.Namespace+"/"+ws.ConfigMapName()]; ok && cm.Labels[vocab.WorkspaceLabel] == ws.Name {
			last = &workspace.LastGood{Data: cm.Data, Annotations: cm.Annotations}
		}
	}
	out, err := workspace.Decide(ws, res, platform, tenant, last)
	if err != nil {
		return nil, fmt.Errorf("workspace %s/%s: %w", ws.Namespace, ws.Name, err)
	}
	if out.Held != nil {
		fmt.Fprintf(stderr, "workspace %s/%s: %s (%s: %s): %s\n", ws.Namespace, ws.Name, out.Kind, f.Phase, f.Reason, f)
	}
	return out.ConfigMap, nil
}

// checkPlatformNamespaces says on stderr which platform namespaces the
// manifests leave without the platform's policy; with strict, any is an
// error. The controller honours a platform namespace only with its trust
// label, which an installation sets: a Namespace manifest without a valid
// label counts for nothing, so no Workspace gets its hooks, denied tools or
// prompt guides. A platform namespace with no Namespace manifest is taken as
// the installed one, labelled trusted, and said so.
func checkPlatformNamespaces(set *objectSet, policy workspace.Policy, strict bool, stderr io.Writer) error {
	var problems []string
	for _, ns := range policy.PlatformNamespaces {
		n, ok := set.namespaces[ns]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("platform namespace %s has no Namespace manifest: preview takes it as installed with %s=%s; a cluster honours it only with that label", ns, vocab.TrustLabel, vocab.TrustTrusted))
			set.namespaces[ns] = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
				Labels: map[string]string{vocab.TrustLabel: string(vocab.TrustTrusted)}}}
		case policy.UnlabelledPlatform(ns, n.Labels):
			problems = append(problems, fmt.Sprintf("platform namespace %s has no valid %s label: it counts for nothing, so no Workspace gets its platform policy (hooks, denied tools, prompt guides); a trust admin must label it %s=%s",
				ns, vocab.TrustLabel, vocab.TrustLabel, vocab.TrustTrusted))
		}
	}
	for _, p := range problems {
		fmt.Fprintln(stderr, "warning: "+p)
	}
	if strict && len(problems) > 0 {
		return fmt.Errorf("--strict: %s", strings.Join(problems, "; "))
	}
	return nil
}

// fromRoots publishes one Workspace from directory roots, each named after
// its directory.
func (o *previewOptions) fromRoots(stderr io.Writer) ([]configMap, error) {
	in := resources.Input{
		Workspace:       contract.WorkspaceRef{Name: o.workspace, Namespace: o.namespace},
		MaxContextBytes: o.maxBytes,
	}
	for _, dir := range o.roots {
		root, diags, err := skilldir.LoadRoot(filepath.Base(filepath.Clean(dir)), dir, skilldir.Options{Strict: o.strict, TruncateDescriptions: o.truncate})
		for _, d := range diags {
			fmt.Fprintln(stderr, d)
		}
		if err != nil {
			return nil, err
		}
		in.Roots = append(in.Roots, root)
	}
	for _, a := range o.activate {
		name, files, _ := strings.Cut(a, "=")
		act := resources.Activation{Skill: name}
		if files != "" {
			act.Files = strings.Split(files, ",")
		}
		in.Activate = append(in.Activate, act)
	}
	r, err := resources.Render(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", resources.ReasonOf(err), err)
	}
	ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: o.workspace, Namespace: o.namespace}}
	return []configMap{workspace.ContextConfigMap(ws, r)}, nil
}
