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
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/sources"
)

// Object limits of the Skill CRD (api/v1alpha1/limits.go) that a directory
// skill can exceed. import checks them so that what it prints applies
// cleanly.
const (
	maxSkillFiles       = v1alpha1.MaxSkillFiles
	maxSkillText        = v1alpha1.MaxSkillTextLength
	maxLicenseLen       = v1alpha1.MaxLicenseLength
	maxMetadataEntries  = v1alpha1.MaxMetadataEntries
	maxAllowedTools     = v1alpha1.MaxAllowedTools
	maxAllowedToolRunes = v1alpha1.MaxAllowedToolLength
)

func newImportCommand() *cobra.Command {
	var namespace, pushRepo, registryConfig string
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Print Skill and Template manifests for Agent Skills directories",
		Long: `Turn a directory of Agent Skills into Skill (and Template) manifests on stdout.

DIR may be a root in the seed layout (skills/<dir>/SKILL.md, templates/<name>.md),
a directory of skill directories (<dir>/SKILL.md), or one skill directory.
Names are checked strictly, as the API server will. Every file that is skipped
is reported on stderr with the reason; the exit status is non-zero if anything
was skipped or invalid.`,
		Example: `  loadout import ./skills > skills.yaml
  loadout import ~/.agents -n team-a | kubectl apply -f -`,
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
			return runImport(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], namespace, push)
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "metadata.namespace of the printed objects (default: none)")
	cmd.Flags().StringVar(&pushRepo, "push", "", "push every skill as an OCI artifact to REF/<skill> (see 'loadout push') and print Skills pinned by digest")
	cmd.Flags().StringVar(&registryConfig, "registry-config", "", "with --push: docker config.json with registry credentials")
	return cmd
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

func runImport(ctx context.Context, stdout, stderr io.Writer, dir, namespace string, push importPush) error {
	skills, templates, diags, loadErr := loadForImport(dir)
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
	for _, s := range skills {
		if err := checkSkillLimits(s); err != nil && push.repo == "" {
			fmt.Fprintf(stderr, "%s: %s: %v\n", filepath.Join(dir, s.Origin.Path), resources.SeveritySkipped, err)
			failed++
			continue
		}
		if push.repo != "" {
			doc, err := pushSkill(ctx, s, strings.TrimSuffix(push.repo, "/")+"/"+s.Name, namespace, push.opts...)
			if err != nil {
				fmt.Fprintf(stderr, "%s: %s: %v\n", filepath.Join(dir, s.Origin.Path), resources.SeveritySkipped, err)
				failed++
				continue
			}
			docs = append(docs, doc)
			continue
		}
		docs = append(docs, skillManifest(s, namespace))
	}
	for _, t := range templates {
		docs = append(docs, manifest{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Template",
			Metadata: manifestMeta{Name: t.Name, Namespace: namespace},
			Spec:     v1alpha1.TemplateSpec{Description: t.Description, Body: t.Body}})
	}
	if err := printManifests(stdout, docs); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("import %s: %d file(s) skipped or invalid, see above", dir, failed)
	}
	return nil
}

// loadForImport reads DIR strictly as a seed-layout root when it has one of
// its sources, else as a directory of skills.
func loadForImport(dir string) ([]resources.Skill, []resources.Template, []resources.Diagnostic, error) {
	opts := resources.DirOptions{Strict: true}
	name := filepath.Base(filepath.Clean(dir))
	for _, src := range []string{"skills", "templates"} {
		if info, err := os.Stat(filepath.Join(dir, src)); err == nil && info.IsDir() {
			root, diags, err := resources.LoadDirRoot(name, dir, opts)
			return root.Skills, root.Templates, diags, err
		}
	}
	skills, diags, err := resources.LoadSkillsDir(name, dir, opts)
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
		file := v1alpha1.SkillFile{Path: f.Path, Content: f.Content, Executable: f.Executable}
		if f.Binary {
			file.Content, file.BinaryContent = "", []byte(f.Content)
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
