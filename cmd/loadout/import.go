package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skilldir"
	"github.com/loadout-dev/loadout/internal/sources"
)

// Object limits of the Skill CRD (api/v1alpha1/vocab/limits.go) that a directory
// skill can exceed. import checks them so that what it prints applies
// cleanly.
const (
	maxSkillFiles       = vocab.MaxSkillFiles
	maxSkillText        = vocab.MaxSkillTextLength
	maxLicenseLen       = vocab.MaxLicenseLength
	maxMetadataEntries  = vocab.MaxMetadataEntries
	maxAllowedTools     = vocab.MaxAllowedTools
	maxAllowedToolRunes = vocab.MaxAllowedToolLength
)

func newImportCommand() *cobra.Command {
	var (
		namespace, pushRepo, registryConfig string
		truncate                            bool
	)
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Print Skill and Template manifests for Agent Skills directories",
		Long: `Turn a directory of Agent Skills into Skill (and Template) manifests on stdout.

DIR may be one skill directory (it holds SKILL.md: everything below it is the
skill's files, whatever the subfolders are called, templates/ included), a root
in the seed layout (skills/, templates/<name>.md) or a directory of skills.
Skills are found as the Pi agent finds them: a directory holding SKILL.md at
any depth (nothing below it is searched), a *.md file with frontmatter directly
in the skills directory, symbolic links that stay inside DIR; hidden entries,
node_modules and what .gitignore, .ignore and .fdignore exclude are passed
over. docs/cli.md lists what differs from Pi.

Names are checked strictly, as the API server will. Every file that is skipped
is reported on stderr with the reason; the exit status is non-zero if anything
was skipped or invalid, or if DIR holds no skill and no template. Binary files
are kept (binaryContent) and so are executable bits; a skill too large for a
Skill object needs --push.`,
		Example: `  loadout import ./skills > skills.yaml
  loadout import ~/.agents -n team-a | kubectl apply -f -
  loadout import ./skills -n team-a --push ghcr.io/acme/skills | kubectl apply -f -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			push := importPush{repo: pushRepo}
			if pushRepo != "" {
				kc, err := sources.LoadDockerConfig(registryConfig)
				if err != nil {
					return err
				}
				push.opts = []remote.Option{remote.WithAuthFromKeychain(kc)}
			}
			opts := importOptions{namespace: namespace, push: push, truncateDescriptions: truncate}
			return runImport(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], opts)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "metadata.namespace of the printed objects (default: none)")
	cmd.Flags().StringVar(&pushRepo, "push", "", "push every skill as an OCI artifact to REF/<skill> (see 'loadout push') and print Skills pinned by digest")
	cmd.Flags().StringVar(&registryConfig, "registry-config", "", "with --push: docker config.json with registry credentials")
	cmd.Flags().BoolVar(&truncate, "truncate-descriptions", false, "cut a description over 1,024 characters to 1,024, with a warning, instead of skipping the skill (with --push, the pushed SKILL.md gets the cut description)")
	return cmd
}

// importOptions are the flags of `loadout import`.
type importOptions struct {
	namespace            string
	push                 importPush
	truncateDescriptions bool
}

// manifest is a printed object: only what applies, no status or null fields.
type manifest struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   manifestMeta `json:"metadata"`
	Spec       any          `json:"spec"`
}

type manifestMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// importPush, when repo is set, pushes every skill as an OCI artifact to
// repo/<skill name> and prints Skills pinned to the pushed digests.
type importPush struct {
	repo string
	opts []remote.Option
}

func runImport(ctx context.Context, stdout, stderr io.Writer, dir string, o importOptions) error {
	push := o.push
	skills, templates, diags, loadErr := loadForImport(dir, skilldir.Options{
		Strict: true, TruncateDescriptions: o.truncateDescriptions,
		// --push packs each skill directory from disk.
		SkipFiles: push.repo != "",
	})
	failed := 0
	for _, d := range diags {
		fmt.Fprintln(stderr, d)
		if d.Severity != resources.SeverityWarning {
			failed++
		}
	}
	if loadErr != nil && failed == 0 {
		return loadErr
	}
	var docs []manifest
	first := map[string]resources.Skill{}
	for _, s := range skills {
		shown := filepath.Join(dir, s.Origin.Path)
		if other, ok := first[s.Name]; ok {
			// Pi keeps the first of two skills with one name; two Skill
			// objects of one name would overwrite each other.
			fmt.Fprintf(stderr, "%s: %s: skill name %q is also the name of %s (Pi loads only the first)\n",
				shown, resources.SeverityError, s.Name, filepath.Join(dir, other.Origin.Path))
			failed++
			continue
		}
		first[s.Name] = s
		if err := checkSkillLimits(s); err != nil && push.repo == "" {
			fmt.Fprintf(stderr, "%s: %s: %v\n", shown, resources.SeveritySkipped, err)
			failed++
			continue
		}
		if push.repo != "" {
			tree, err := skillTree(dir, s)
			var doc manifest
			if err == nil {
				doc, err = pushSkill(ctx, s, tree, strings.TrimSuffix(push.repo, "/")+"/"+s.Name, o.namespace, nil, push.opts...)
			}
			if err != nil {
				fmt.Fprintf(stderr, "%s: %s: %v\n", shown, resources.SeveritySkipped, err)
				failed++
				continue
			}
			docs = append(docs, doc)
			continue
		}
		docs = append(docs, skillManifest(s, o.namespace))
	}
	for _, t := range templates {
		docs = append(docs, manifest{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Template",
			Metadata: manifestMeta{Name: t.Name, Namespace: o.namespace},
			Spec:     v1alpha1.TemplateSpec{Description: t.Description, Body: t.Body}})
	}
	if err := printManifests(stdout, docs); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("import %s: %d file(s) skipped or invalid, see above", dir, failed)
	}
	if len(docs) == 0 {
		return fmt.Errorf("import %s: found no skill (a directory holding SKILL.md, or a *.md file with frontmatter in a directory of skills) and no template (templates/<name>.md)", dir)
	}
	return nil
}

// loadForImport reads DIR as one skill when it holds SKILL.md, whatever its
// subfolders are called (anthropics/skills' algorithmic-art has templates/),
// else as a seed-layout root when it has one of its sources, else as a
// directory of skills.
func loadForImport(dir string, opts skilldir.Options) ([]resources.Skill, []resources.Template, []resources.Diagnostic, error) {
	name := filepath.Base(filepath.Clean(dir))
	if info, err := os.Stat(filepath.Join(dir, "SKILL.md")); err == nil && info.Mode().IsRegular() {
		skills, diags, err := skilldir.LoadSkills(name, dir, opts)
		return skills, nil, diags, err
	}
	for _, src := range []string{"skills", "templates"} {
		if info, err := os.Stat(filepath.Join(dir, src)); err == nil && info.IsDir() {
			root, diags, err := skilldir.LoadRoot(name, dir, opts)
			return root.Skills, root.Templates, diags, err
		}
	}
	skills, diags, err := skilldir.LoadSkills(name, dir, opts)
	return skills, nil, diags, err
}

// checkSkillLimits applies the Skill CRD's bounds.
func checkSkillLimits(s resources.Skill) error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(len(s.Body) > 0 && len(s.Body) <= maxSkillText, "body: must be 1 to %d bytes", maxSkillText)
	check(len(s.Files) <= maxSkillFiles, "files: at most %d files, found %d", maxSkillFiles, len(s.Files))
	for _, f := range s.Files {
		if f.Binary {
			check(base64.StdEncoding.EncodedLen(len(f.Content)) <= maxSkillText, "file %s: binary content over %d bytes (use --push for an external source)", f.Path, base64.StdEncoding.DecodedLen(maxSkillText))
		} else {
			check(len(f.Content) <= maxSkillText, "file %s: content over %d bytes (use --push for an external source)", f.Path, maxSkillText)
		}
	}
	check(len(s.License) <= maxLicenseLen, "license: at most %d characters", maxLicenseLen)
	check(len(s.Metadata) <= maxMetadataEntries, "metadata: at most %d entries", maxMetadataEntries)
	check(len(s.AllowedTools) <= maxAllowedTools, "allowed-tools: at most %d entries", maxAllowedTools)
	for _, t := range s.AllowedTools {
		check(utf8.RuneCountInString(t) <= maxAllowedToolRunes, "allowed-tools: %q is over %d characters", t, maxAllowedToolRunes)
	}
	return errors.Join(errs...)
}

func skillManifest(s resources.Skill, namespace string) manifest {
	spec := v1alpha1.SkillSpec{
		Source:        skillSourceSpec(s.Source),
		Description:   v1alpha1.Description(s.Description),
		Body:          s.Body,
		License:       s.License,
		Compatibility: s.Compatibility,
		Metadata:      s.Metadata,
		AllowedTools:  s.AllowedTools,
	}
	for _, f := range s.Files {
		file := v1alpha1.SkillFile{Path: f.Path, Content: f.Text(), Executable: f.Executable()}
		if f.Binary {
			file.Content, file.BinaryContent = "", f.Content
		}
		spec.Files = append(spec.Files, file)
	}
	return manifest{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Skill",
		Metadata: manifestMeta{Name: s.Name, Namespace: namespace}, Spec: spec}
}

// skillSourceSpec is the API form of a pinned source.
func skillSourceSpec(s *contract.SkillSource) *v1alpha1.SkillSource {
	switch {
	case s == nil:
		return nil
	case s.OCI != nil:
		return &v1alpha1.SkillSource{OCI: &v1alpha1.OCISkillSource{Reference: s.OCI.Reference}}
	case s.Git != nil:
		return &v1alpha1.SkillSource{Git: &v1alpha1.GitSkillSource{URL: s.Git.URL, Commit: s.Git.Commit, Path: s.Git.Path}}
	}
	return nil
}
