package resources

import (
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/skillfile"
)

// buildManifest assembles manifest.json: metadata of everything, bodies of
// nothing. Only the names and requested files of active skills appear, so
// an inactive body can never reach it (R-CAT-4).
//
// Every instruction, catalog entry and prompt guide carries its provenance
// (contract.Provenance), and every instruction the byte range of its body in
// system-prompt.md, so an agent side tells the platform's text from a
// tenant's by slicing, never by re-deriving the prompt.
func buildManifest(ws contract.WorkspaceRef, instructions []Instruction, cat *Catalog, active []ActivatedSkill, reg contract.Registry, platform []string) contract.Manifest {
	sources, length := instructionSources(instructions, platform)
	m := contract.Manifest{
		APIVersion:         contract.APIVersion,
		Kind:               contract.ManifestKind,
		Workspace:          ws,
		Instructions:       make([]string, 0, len(instructions)),
		InstructionSources: sources,
		InstructionsLength: length,
		Catalog:            catalogWithProvenance(cat, platform),
		Shadowed:           cat.Shadowed,
		ActiveSkills:       make([]contract.ActiveSkill, 0, len(active)),
		Templates:          []contract.TemplateInfo{},
		Commands:           []contract.Command{},
		Registry:           reg,
	}
	for _, in := range instructions {
		m.Instructions = append(m.Instructions, in.Origin.String())
	}
	sorted, _ := checkActive(cat, active) // already checked by BuildContext
	for _, a := range sorted {
		files := make([]string, 0, len(a.Files))
		for _, f := range a.Files {
			files = append(files, f.Request)
		}
		m.ActiveSkills = append(m.ActiveSkills, contract.ActiveSkill{Name: a.Name, Files: files})
	}
	for _, t := range cat.Templates() {
		m.Templates = append(m.Templates, contract.TemplateInfo{Name: t.Name, Description: t.Description, Variables: cat.commandVariables(t)})
		m.Commands = append(m.Commands, contract.Command{Name: t.Name, Template: t.Name, Description: t.Description})
	}
	return m
}

// catalogWithProvenance is the catalog's entries, each with the provenance
// of its winner.
func catalogWithProvenance(cat *Catalog, platform []string) []contract.CatalogEntry {
	out := make([]contract.CatalogEntry, len(cat.Entries))
	for i, e := range cat.Entries {
		var o Origin
		switch e.Kind {
		case KindSkill:
			o = cat.skills[e.Name].Origin
		case KindTemplate:
			o = cat.templates[e.Name].Origin
		}
		e.Provenance = ProvenanceOf(o, platform)
		out[i] = e
	}
	return out
}

// skillDoc is one entry of skills.json.
func skillDoc(s Skill) contract.SkillDoc {
	files := make([]contract.FileDoc, 0, len(s.Files))
	for _, f := range s.Files {
		files = append(files, fileDoc(f))
	}
	return contract.SkillDoc{
		Name: s.Name, Description: s.Description, Origin: s.Origin.String(), Body: s.Body, Files: files,
		License: s.License, Compatibility: s.Compatibility, Metadata: s.Metadata, AllowedTools: s.AllowedTools,
		Source: s.Source,
	}
}

// templatesDoc is templates.json: every winning template in full, sorted by name.
func templatesDoc(cat *Catalog) contract.Templates {
	doc := contract.Templates{Templates: []contract.TemplateDoc{}}
	for _, t := range cat.Templates() {
		doc.Templates = append(doc.Templates, templateDoc(t, cat))
	}
	return doc
}

// templateDoc is one entry of templates.json.
func templateDoc(t Template, cat *Catalog) contract.TemplateDoc {
	return contract.TemplateDoc{
		Name: t.Name, Description: t.Description, Origin: t.Origin.String(), Body: t.Body,
		Variables: cat.commandVariables(t), Steps: slices.Clone(t.Steps),
	}
}

// fileDoc publishes a file: text as it is, binary bytes base64-encoded.
func fileDoc(f File) contract.FileDoc {
	d := contract.FileDoc{Path: f.Path, Content: f.Text(), Executable: f.Executable()}
	if f.Binary {
		d.Content = base64.StdEncoding.EncodeToString(f.Content)
		d.Encoding = contract.EncodingBase64
	}
	return d
}

// FileFromDoc is the inverse of fileDoc.
func FileFromDoc(d contract.FileDoc) (File, error) {
	f := File{Path: d.Path, Content: []byte(d.Content), Mode: skillfile.ModeFile}
	if d.Executable {
		f.Mode = skillfile.ModeExecutable
	}
	switch d.Encoding {
	case "":
	case contract.EncodingBase64:
		b, err := base64.StdEncoding.DecodeString(d.Content)
		if err != nil {
			return File{}, fmt.Errorf("file %s: %w", d.Path, err)
		}
		f.Content, f.Binary = b, true
	default:
		return File{}, fmt.Errorf("file %s: unknown encoding %q", d.Path, d.Encoding)
	}
	return f, nil
}
