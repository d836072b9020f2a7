package resources

import (
	"cmp"
	"slices"

	"github.com/loadout-dev/loadout/internal/contract"
)

// Catalog is what exists after discovery. Its exported, serializable
// part is metadata only: winners with their origin and the shadowed losers
// with the origin of their winner (R-CAT-4, R-CAT-6). Full skills and templates
// stay unexported and leave only as deep copies, so no inactive body can reach
// a serialized catalog by accident.
type Catalog struct {
	// Entries are the winners, sorted by kind, then logical name (R-CAT-3).
	Entries []contract.CatalogEntry `json:"catalog"`
	// Shadowed are the losers, sorted by kind, name, then root order.
	Shadowed []contract.Shadowed `json:"shadowed"`

	skills       map[string]Skill
	templates    map[string]Template
	instructions []Instruction
}

// candidate is a resource of one root, before duplicates are checked.
type candidate struct {
	kind, name string
	origin     Origin
}

// BuildCatalog builds the catalog from ordered roots: on a kind:name collision across
// roots the root listed first wins (R-CAT-1); two of one kind:name inside one
// root are a *DuplicateNameError (R-CAT-2); invalid resources are an
// *InvalidResourceError. Winner selection follows root order only; the output
// order is a separate sort by kind and name (R-CAT-3), so the result is
// byte-identical for identical input (R-CAT-6).
func BuildCatalog(roots []Root) (*Catalog, error) {
	c := &Catalog{
		Entries:   []contract.CatalogEntry{},
		Shadowed:  []contract.Shadowed{},
		skills:    map[string]Skill{},
		templates: map[string]Template{},
	}
	winners := map[string]Origin{} // "kind:name" → winner origin
	for _, root := range roots {
		var found []candidate
		for _, s := range root.Skills {
			if err := validateSkill(s, !root.Lenient); err != nil {
				return nil, err
			}
			found = append(found, candidate{KindSkill, s.Name, s.Origin})
		}
		for _, t := range root.Templates {
			if err := validateTemplate(t, !root.Lenient); err != nil {
				return nil, err
			}
			found = append(found, candidate{KindTemplate, t.Name, t.Origin})
		}
		if err := checkDuplicates(root.Name, found); err != nil {
			return nil, err
		}
		for _, s := range root.Skills {
			if c.decide(winners, KindSkill, s.Name, s.Description, s.Origin) {
				c.skills[s.Name] = s.Clone()
			}
		}
		for _, t := range root.Templates {
			if c.decide(winners, KindTemplate, t.Name, t.Description, t.Origin) {
				c.templates[t.Name] = t
			}
		}
		c.instructions = append(c.instructions, root.Instructions...)
	}
	slices.SortFunc(c.Entries, func(a, b contract.CatalogEntry) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	// SortStableFunc keeps root order among losers of one identity.
	slices.SortStableFunc(c.Shadowed, func(a, b contract.Shadowed) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	return c, nil
}

// checkDuplicates reports the first kind:name that occurs twice in one root.
func checkDuplicates(root string, found []candidate) error {
	seen := make(map[string]Origin, len(found))
	for _, f := range found {
		key := f.kind + ":" + f.name
		if first, ok := seen[key]; ok {
			return &DuplicateNameError{Kind: f.kind, Name: f.name, Root: root, First: first, Second: f.origin}
		}
		seen[key] = f.origin
	}
	return nil
}

// decide records a resource as winner if its identity is new, else as shadowed
// by the earlier root's winner. It reports whether the resource won.
func (c *Catalog) decide(winners map[string]Origin, kind, name, description string, o Origin) bool {
	key := kind + ":" + name
	if w, ok := winners[key]; ok {
		c.Shadowed = append(c.Shadowed, contract.Shadowed{Kind: kind, Name: name, Origin: o.String(), ShadowedBy: w.String()})
		return false
	}
	winners[key] = o
	c.Entries = append(c.Entries, contract.CatalogEntry{Kind: kind, Name: name, Description: description, Origin: o.String()})
	return true
}

// Skill returns a deep copy of the winning skill of that logical name.
func (c *Catalog) Skill(name string) (Skill, bool) {
	s, ok := c.skills[name]
	return s.Clone(), ok
}

// Template returns the winning template of that logical name.
func (c *Catalog) Template(name string) (Template, bool) {
	t, ok := c.templates[name]
	return t, ok
}

// Skills returns deep copies of the winning skills sorted by name.
func (c *Catalog) Skills() []Skill {
	out := make([]Skill, 0, len(c.skills))
	for _, e := range c.Entries {
		if e.Kind == KindSkill {
			out = append(out, c.skills[e.Name].Clone())
		}
	}
	return out
}

// commandVariables are the variables of a winning template's command
// (CommandVariables), its render steps looked up among the winners.
func (c *Catalog) commandVariables(t Template) []string {
	return CommandVariables(t.Body, t.Steps, func(name string) (string, bool) {
		w, ok := c.templates[name]
		return w.Body, ok
	})
}

// Templates returns the winning templates sorted by name.
func (c *Catalog) Templates() []Template {
	out := make([]Template, 0, len(c.templates))
	for _, e := range c.Entries {
		if e.Kind == KindTemplate {
			out = append(out, c.templates[e.Name])
		}
	}
	return out
}

// Instructions returns the roots' instructions in root order. Instructions
// have no logical name, so they never shadow each other: every root's rules
// apply, the first root's first.
func (c *Catalog) Instructions() []Instruction {
	return slices.Clone(c.instructions)
}
