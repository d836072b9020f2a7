package workspace

import (
	"cmp"
	"slices"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skillfile"
)

// RootFromObjects converts the Skill and Template objects of one root into a
// strict resources.Root. Objects are ordered by namespace and object name: inside one
// root that order never chooses a winner (a duplicate is an error, R-CAT-2),
// it only makes error messages stable. Objects keep their own namespace in
// their origin; namespace is used for objects that have none (as in manifests
// without metadata.namespace).
func RootFromObjects(name, namespace string, skills []v1alpha1.Skill, templates []v1alpha1.Template) resources.Root {
	root := resources.Root{Name: name}
	for _, s := range sortedObjects(skills, func(s *v1alpha1.Skill) (string, string) { return s.Namespace, s.Name }) {
		files := make([]resources.File, 0, len(s.Spec.Files))
		for _, f := range s.Spec.Files {
			file := resources.File{Path: f.Path, Content: []byte(f.Content), Mode: skillfile.ModeFile}
			if f.Executable {
				file.Mode = skillfile.ModeExecutable
			}
			if f.BinaryContent != nil {
				file.Content, file.Binary = f.BinaryContent, true
			}
			files = append(files, file)
		}
		root.Skills = append(root.Skills, resources.Skill{
			Name:          s.LogicalName(),
			Description:   string(s.Spec.Description),
			Body:          s.Spec.Body,
			Files:         files,
			License:       s.Spec.License,
			Compatibility: s.Spec.Compatibility,
			Metadata:      s.Spec.Metadata,
			AllowedTools:  s.Spec.AllowedTools,
			Origin:        objectOrigin(name, namespace, s.Namespace, s.Name),
			Source:        sourceOf(s.Spec.Source),
		}.Clone())
	}
	for _, t := range sortedObjects(templates, func(t *v1alpha1.Template) (string, string) { return t.Namespace, t.Name }) {
		root.Templates = append(root.Templates, resources.Template{
			Name:        t.LogicalName(),
			Description: t.Spec.Description,
			Body:        t.Spec.Body,
			Origin:      objectOrigin(name, namespace, t.Namespace, t.Name),
			Steps:       templateSteps(t.Spec.Steps),
		})
	}
	return root
}

// templateSteps converts a Template's steps to the engine's form; arguments
// stay the JSON the API server stored.
func templateSteps(steps []v1alpha1.TemplateStep) []contract.TemplateStep {
	if len(steps) == 0 {
		return nil
	}
	out := make([]contract.TemplateStep, len(steps))
	for i, s := range steps {
		out[i] = contract.TemplateStep{Tool: s.Tool, Render: s.Render, Template: string(s.Template)}
		if s.Arguments != nil {
			out[i].Arguments = slices.Clone(s.Arguments.Raw)
		}
	}
	return out
}

func objectOrigin(root, defaultNamespace, namespace, object string) resources.Origin {
	return resources.Origin{Root: root, Namespace: cmp.Or(namespace, defaultNamespace), Object: object}
}

// sortedObjects returns pointers to the items ordered by namespace and name,
// leaving the caller's slice untouched.
func sortedObjects[T any](items []T, key func(*T) (string, string)) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	slices.SortStableFunc(out, func(a, b *T) int {
		an, aname := key(a)
		bn, bname := key(b)
		return cmp.Or(cmp.Compare(an, bn), cmp.Compare(aname, bname))
	})
	return out
}

// sourceOf converts a Skill's spec.source to its published form.
func sourceOf(s *v1alpha1.SkillSource) *contract.SkillSource {
	switch {
	case s == nil:
		return nil
	case s.OCI != nil:
		return &contract.SkillSource{OCI: &contract.OCISource{Reference: s.OCI.Reference}}
	case s.Git != nil:
		return &contract.SkillSource{Git: &contract.GitSource{URL: s.Git.URL, Commit: s.Git.Commit, Path: s.Git.Path}}
	}
	return &contract.SkillSource{} // neither: validateSkill reports it
}
