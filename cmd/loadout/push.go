package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/ociskill"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/skilldir"
	"github.com/loadout-dev/loadout/internal/skillmd"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillsig"
	"github.com/loadout-dev/loadout/internal/sources"
)

func newPushCommand() *cobra.Command {
	var (
		namespace      string
		registryConfig string
		signKey        string
	)
	cmd := &cobra.Command{
		Use:   "push DIR REF",
		Short: "Pack a skill directory into an OCI artifact, push it, and print its Skill pinned by digest",
		Long: `Pack the skill directory DIR (the directory holding SKILL.md) into an OCI
artifact and push it to REF (REGISTRY/REPOSITORY, optionally with a tag). The
artifact is deterministic: the same directory always has the same digest
(files sorted, times, owners and gzip left out, modes 0644 or 0755).
Binary files and executable bits are kept; hidden entries are left out.

The Skill manifest printed on stdout takes its name and description from
SKILL.md and pins the pushed digest in spec.source.oci.reference: apply it,
and agents fetch the skill with 'loadout materialize' or 'loadout hostd'.
Media types are described in docs/concepts.md.

--sign-key signs the pushed artifact's manifest with an ECDSA P-256 private
key (PEM) and attaches the Sigstore bundle to it as an OCI referrer
(artifactType application/vnd.dev.sigstore.bundle.v0.3+json), for agents
that accept only skills signed by a trusted key (--skill-signers;
docs/security.md, "Signed skills"). Nothing is sent to a transparency log.`,
		Example: `  loadout push ./skills/docx ghcr.io/acme/skills/docx -n team-a | kubectl apply -f -
  loadout push ./skills/docx ghcr.io/acme/skills/docx --sign-key release.key`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			kc, err := sources.LoadDockerConfig(registryConfig)
			if err != nil {
				return err
			}
			dir := args[0]
			skills, _, _, err := loadForImport(dir, skilldir.Options{Strict: true, SkipFiles: true})
			if err != nil {
				return err
			}
			if len(skills) != 1 || filepath.Clean(skilldir.DirOf(skills[0])) != mustAbs(dir) {
				return fmt.Errorf("push %s: not a skill directory (it must hold SKILL.md with a name and description)", dir)
			}
			tree, err := skillTree(dir, skills[0])
			if err != nil {
				return err
			}
			var signer *skillsig.Signer
			if signKey != "" {
				pemKey, err := os.ReadFile(signKey)
				if err != nil {
					return err
				}
				if signer, err = skillsig.ParseSigner(pemKey); err != nil {
					return fmt.Errorf("--sign-key %s: %w", signKey, err)
				}
			}
			doc, err := pushSkill(cmd.Context(), skills[0], tree, args[1], namespace, signer, remote.WithAuthFromKeychain(kc))
			if err != nil {
				return err
			}
			return printManifests(cmd.OutOrStdout(), []manifest{doc})
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "metadata.namespace of the printed Skill (default: none)")
	cmd.Flags().StringVar(&registryConfig, "registry-config", "", "docker config.json with registry credentials; empty means anonymous")
	cmd.Flags().StringVar(&signKey, "sign-key", "", "ECDSA P-256 private key (PEM) that signs the artifact: a Sigstore bundle attached as an OCI referrer")
	return cmd
}

// skillTree reads what a loaded skill publishes as an artifact: its
// directory, or, for a skill of one *.md file directly in the skills
// directory (no skill directory), that file as SKILL.md. dir is the directory the skill
// was loaded from; its Origin.Path is relative to it.
func skillTree(dir string, s resources.Skill) (skillpack.Tree, error) {
	if skillDir := skilldir.DirOf(s); skillDir != "" {
		return skillpack.ReadDir(skillDir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	md, err := root.ReadFile(filepath.FromSlash(s.Origin.Path))
	if err != nil {
		return nil, err
	}
	return skillpack.Tree{{Path: "SKILL.md", Mode: skillpack.ModeFile, Content: md}}, nil
}

// pushSkill packs the tree of a loaded skill, pushes it to ref and returns
// its Skill manifest pinned by digest. A description the loader truncated
// (--truncate-descriptions) is written into the packed SKILL.md too, since
// agents refuse a SKILL.md that disagrees with its Skill.
func pushSkill(ctx context.Context, s resources.Skill, tree skillpack.Tree, ref, namespace string, signer *skillsig.Signer, opts ...remote.Option) (manifest, error) {
	for i, f := range tree {
		if f.Path != "SKILL.md" || skillmd.SkillDescription(f.Content) == s.Description {
			continue
		}
		md, err := skillmd.SetDescription(f.Content, s.Description)
		if err != nil {
			return manifest{}, fmt.Errorf("SKILL.md: %w", err)
		}
		tree[i].Content = md
	}
	art, err := ociskill.Pack(tree)
	if err != nil {
		return manifest{}, fmt.Errorf("pack %s: %w", s.Origin.Path, err)
	}
	pinned, err := ociskill.Push(ctx, art, ref, opts...)
	if err != nil {
		return manifest{}, err
	}
	if signer != nil {
		bundle, err := signer.Sign(art.Manifest)
		if err != nil {
			return manifest{}, fmt.Errorf("sign %s: %w", pinned, err)
		}
		if _, err := ociskill.PushReferrer(ctx, art, pinned.String(), skillsig.BundleMediaType, bundle, opts...); err != nil {
			return manifest{}, fmt.Errorf("attach the signature to %s: %w", pinned, err)
		}
	}
	s.Body, s.Files = "", nil
	s.Source = &contract.SkillSource{OCI: &contract.OCISource{Reference: pinned.String()}}
	return skillManifest(s, namespace), nil
}

// printManifests writes YAML documents separated by "---".
func printManifests(w io.Writer, docs []manifest) error {
	var b strings.Builder
	for i, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mustAbs(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return abs
}
