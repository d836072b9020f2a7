package resources

import (
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
)

// Roots of the origins of Workspace instructions (package workspace).
const (
	originRootWorkspace = "workspace"
	originRootConfigMap = "configmap"
)

// ProvenanceOf says where a resource of origin o came from, and with whose
// authority: text from one of the platform namespaces is the platform's,
// anything else (a tenant's namespace, a directory root) is project text.
func ProvenanceOf(o Origin, platform []string) contract.Provenance {
	p := contract.Provenance{Authority: contract.AuthorityProject, Namespace: o.Namespace}
	if o.Namespace != "" && slices.Contains(platform, o.Namespace) {
		p.Authority = contract.AuthorityPlatform
	}
	switch {
	case o.Path != "":
		p.Kind, p.Name, p.Root = contract.ProvenanceFile, o.Path, o.Root
	case o.Root == originRootWorkspace:
		p.Kind = contract.ProvenanceWorkspace
		p.Name, p.Key, _ = strings.Cut(o.Object, "/")
	case o.Root == originRootConfigMap:
		p.Kind = contract.ProvenanceConfigMap
		p.Name, p.Key, _ = strings.Cut(o.Object, "/")
	default:
		p.Kind, p.Name, p.Root = contract.ProvenanceObject, o.Object, o.Root
	}
	return p
}

// instructionSources places each instruction in system-prompt.md, which
// BuildContext opens with their bodies (newlines around them trimmed, empty
// ones left out) joined by blank lines. It returns the sources and the
// length of that head. An empty instruction has length 0 at the end of the
// body before it.
func instructionSources(instructions []Instruction, platform []string) ([]contract.InstructionSource, int) {
	out := make([]contract.InstructionSource, 0, len(instructions))
	next, end := 0, 0
	for _, in := range instructions {
		s := contract.InstructionSource{Origin: in.Origin.String(), Provenance: ProvenanceOf(in.Origin, platform), Offset: end}
		if body := strings.Trim(in.Body, "\n"); body != "" {
			s.Offset, s.Length = next, len(body)
			end = next + len(body)
			next = end + len("\n\n")
		}
		out = append(out, s)
	}
	return out, end
}

// guideProvenance is the provenance of each prompt guide: its extension's
// namespace decides its authority. A guide whose extension's namespace is
// unknown is project text.
func guideProvenance(reg contract.Registry, namespaces map[string]string, platform []string) {
	for i, g := range reg.PromptGuides {
		ns := namespaces[g.Extension]
		p := contract.Provenance{Authority: contract.AuthorityProject, Namespace: ns, Kind: contract.ProvenanceExtension, Name: g.Extension}
		if ns != "" && slices.Contains(platform, ns) {
			p.Authority = contract.AuthorityPlatform
		}
		reg.PromptGuides[i].Provenance = &p
	}
}

// hookProvenance gives each hook of reg without a namespace its
// extension's, so the text a hook adds is labelled with where it came from
// (docs/hooks.md, "Where hook text comes from").
func hookProvenance(reg contract.Registry, namespaces map[string]string) {
	for i, h := range reg.Hooks {
		if h.Namespace == "" {
			reg.Hooks[i].Namespace = namespaces[h.Extension]
		}
	}
}

// keepGuideProvenance gives each prompt guide of reg without a provenance
// the one its extension's guide had in old, or else project authority: a
// guide is never raised to the platform's authority without a namespace
// that says so.
func keepGuideProvenance(reg, old contract.Registry) {
	for i, g := range reg.PromptGuides {
		if g.Provenance != nil {
			continue
		}
		p := contract.Provenance{Authority: contract.AuthorityProject, Kind: contract.ProvenanceExtension, Name: g.Extension}
		if j := slices.IndexFunc(old.PromptGuides, func(o contract.PromptGuide) bool { return o.Extension == g.Extension && o.Provenance != nil }); j >= 0 {
			p = *old.PromptGuides[j].Provenance
		}
		reg.PromptGuides[i].Provenance = &p
	}
}
