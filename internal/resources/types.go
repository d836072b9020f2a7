package resources

import (
	"maps"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillfile"
)

// Origin says where a resource came from, for provenance (rule R-CAT-6).
// Object roots set Namespace and Object; directory roots set Path (relative to
// the root directory, slash-separated) so that origins do not depend on where a
// checkout happens to live on disk.
type Origin struct {
	Root      string
	Namespace string
	Object    string
	Path      string
}

// String renders the origin stably: "root/namespace/object" for Kubernetes
// objects and "root:path" for directory roots.
func (o Origin) String() string {
	if o.Path != "" {
		return o.Root + ":" + o.Path
	}
	return strings.Join([]string{o.Root, o.Namespace, o.Object}, "/")
}

// File is one extra file of a skill: the project's one file shape
// (skillfile.File), named here for the engine's readers.
type File = skillfile.File

// Skill is on-demand knowledge in the Agent Skills format.
type Skill struct {
	Name        string
	Description string
	Body        string
	Files       []File
	// Reader re-reads a skill whose content lives outside the catalog (a
	// skill directory, package skilldir): activation reads SKILL.md and the
	// requested files through it (rule R-ACT-2, R-ACT-4). Nil for Kubernetes
	// objects and published skills, whose content is Body and Files.
	Reader        SkillReader
	License       string
	Compatibility string
	Metadata      map[string]string
	AllowedTools  []string
	Origin        Origin
	// Source pins external content (spec.source): Body and Files are then
	// empty, and only the agent side reads the content.
	Source *contract.SkillSource
}

// Template is a reusable prompt with {{name}} placeholders.
type Template struct {
	Name        string
	Description string
	Body        string
	Origin      Origin
	// Steps make the template's command a fixed sequence of actions.
	Steps []contract.TemplateStep
}

// Instruction is a block of project rules (an AGENTS.md).
type Instruction struct {
	Body   string
	Origin Origin
}

// Root is one ordered layer of resources. Lenient marks a directory root
// loaded in lenient mode: its skill names were already checked by the gatherer,
// which accepted names breaking rule R-SK-1 with a warning, so BuildCatalog checks
// them only structurally. The zero value is strict, as for Kubernetes objects.
type Root struct {
	Name         string
	Skills       []Skill
	Templates    []Template
	Instructions []Instruction
	Lenient      bool
}

// Activation asks for a skill's body and some of its files in the context.
type Activation struct {
	Skill string
	Files []string
}

// Resource kinds as they appear in catalog entries.
const (
	KindSkill    = "skill"
	KindTemplate = "template"
)

// Clone returns a deep copy, so callers never share slices or maps with the
// catalog (rule R-ACT-5).
func (s Skill) Clone() Skill {
	c := s
	c.Files = slices.Clone(s.Files)
	c.AllowedTools = slices.Clone(s.AllowedTools)
	c.Metadata = maps.Clone(s.Metadata)
	c.Source = cloneSource(s.Source)
	return c
}

func cloneSource(s *contract.SkillSource) *contract.SkillSource {
	if s == nil {
		return nil
	}
	c := *s
	if s.OCI != nil {
		oci := *s.OCI
		c.OCI = &oci
	}
	if s.Git != nil {
		g := *s.Git
		c.Git = &g
	}
	return &c
}
