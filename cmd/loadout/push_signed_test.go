package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/ociskill"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/sigcheck"
	"github.com/loadout-dev/loadout/internal/skillpack"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/skillsig"
	"github.com/loadout-dev/loadout/internal/skillsig/skillsigtest"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// `loadout push --sign-key`, then `loadout preview` of a namespace whose
// platform Extension trusts the release key (spec.skillSigners), then
// `loadout materialize` with no flag of its own: the context carries the
// requirement (preview shows it) and the skill signed by the release key
// materializes; the same skill pushed unsigned, or signed by another key,
// is refused with the reason. `--skill-signers` on materialize holds the
// same way for a context that requires nothing.
func TestPush_SignedSkillMaterializesOnlyForItsSigner(t *testing.T) {
	host := testnet.Registry(t)
	src := t.TempDir()
	packtest.Write(t, src)
	keys := t.TempDir()
	writeKey := func(name string) (*skillsig.Signer, string) {
		s, err := skillsig.GenerateSigner()
		if err != nil {
			t.Fatal(err)
		}
		priv, _ := s.MarshalPrivateKey()
		path := filepath.Join(keys, name+".key")
		if err := os.WriteFile(path, priv, 0o600); err != nil {
			t.Fatal(err)
		}
		return s, path
	}
	release, releaseKey := writeKey("release")
	_, otherKey := writeKey("other")
	pub, _ := release.PublicKeyPEM()
	signers := filepath.Join(keys, "signers.pem")
	if err := os.WriteFile(signers, pub, 0o644); err != nil {
		t.Fatal(err)
	}

	platform := "apiVersion: v1\nkind: Namespace\nmetadata: {name: loadout-system, labels: {loadout.dev/trust: trusted}}\n---\n" +
		"apiVersion: loadout.dev/v1alpha1\nkind: Extension\nmetadata: {name: release-signers, namespace: loadout-system}\nspec:\n  skillSigners:\n    publicKeys:\n    - |\n" +
		indent(string(pub), "      ")
	materialize := func(skill string, byPlatform bool) (string, error) {
		files := map[string]string{"skill.yaml": skill,
			"workspace.yaml": "apiVersion: loadout.dev/v1alpha1\nkind: Workspace\nmetadata: {name: dev, namespace: team-a}\nspec:\n  activate: [{skill: pdf}]\n"}
		flags := []string{"--skill-signers", signers}
		if byPlatform {
			files["platform.yaml"], flags = platform, nil
		}
		data := previewData(t, "-f", resourcestest.Tree(t, files))
		if byPlatform {
			mustContain(t, "manifest.json", data[contract.KeyManifest], `"skillSigners"`, `"declaredBy": "loadout-system/release-signers"`)
		}
		ctxDir, out := t.TempDir(), filepath.Join(t.TempDir(), "tree")
		writeFiles(t, ctxDir, data)
		_, stderr, err := run(t, append([]string{"materialize", "--context-dir", ctxDir, "--out", out, "--source-cache", t.TempDir()}, flags...)...)
		if err != nil {
			return stderr + err.Error(), err
		}
		return out, nil
	}
	for name, c := range map[string]struct {
		args   []string
		reason string
	}{
		"signed by the release key": {[]string{"--sign-key", releaseKey}, ""},
		"unsigned":                  {nil, "signature Unsigned"},
		"signed by another key":     {[]string{"--sign-key", otherKey}, "signature UntrustedSigner"},
	} {
		t.Run(name, func(t *testing.T) {
			repo := host + "/skills/" + strings.ReplaceAll(name, " ", "-")
			skill, stderr, err := run(t, append([]string{"push", filepath.Join(src, "pdf"), repo, "-n", "team-a"}, c.args...)...)
			if err != nil {
				t.Fatalf("push: %v\n%s", err, stderr)
			}
			for _, byPlatform := range []bool{true, false} {
				out, err := materialize(skill, byPlatform)
				if c.reason == "" {
					if err != nil {
						t.Fatalf("materialize (platform %v): %s", byPlatform, out)
					}
					if _, err := os.Stat(filepath.Join(out, "skills", "pdf", "reference.md")); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err == nil || !strings.Contains(out, c.reason) {
					t.Fatalf("materialize (platform %v) = %q, want refused with %q", byPlatform, out, c.reason)
				}
			}
		})
	}
}

// indent prefixes every line of s with prefix.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "") + "\n"
}

// A platform Extension trusting a release workflow's keyless identity
// under its trusted root: `loadout preview` publishes the requirement and
// `loadout materialize` (the full CLI, which verifies identities) loads
// the skill the workflow signed, offline, and refuses it where the
// platform trusts another workflow.
func TestPreviewMaterialize_KeylessIdentityOfThePlatform(t *testing.T) {
	host := testnet.Registry(t)
	src := t.TempDir()
	packtest.Write(t, src)
	tree, err := skillpack.ReadDir(filepath.Join(src, "pdf"))
	if err != nil {
		t.Fatal(err)
	}
	art, err := ociskill.Pack(tree)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := ociskill.Push(context.Background(), art, host+"/skills/pdf")
	if err != nil {
		t.Fatal(err)
	}
	ss := skillsigtest.New(t)
	bundle := ss.Sign(t, skillsigtest.ReleaseIdentity, skillsigtest.ActionsIssuer, art.Manifest)
	if _, err := ociskill.PushReferrer(context.Background(), art, pinned.String(), sigcheck.BundleMediaType, bundle); err != nil {
		t.Fatal(err)
	}
	skill := "apiVersion: loadout.dev/v1alpha1\nkind: Skill\nmetadata: {name: pdf, namespace: team-a}\nspec:\n  description: " +
		strconv.Quote(packtestDescription(t, tree)) + "\n  source: {oci: {reference: '" + pinned.String() + "'}}\n"
	materialize := func(subject string) (string, error) {
		platform := "apiVersion: v1\nkind: Namespace\nmetadata: {name: loadout-system, labels: {loadout.dev/trust: trusted}}\n---\n" +
			"apiVersion: loadout.dev/v1alpha1\nkind: Extension\nmetadata: {name: release-signers, namespace: loadout-system}\nspec:\n  skillSigners:\n" +
			"    identities: [{issuer: '" + skillsigtest.ActionsIssuer + "', subject: '" + subject + "'}]\n    trustedRoot: |\n" + indent(ss.TrustedRoot, "      ")
		data := previewData(t, "-f", resourcestest.Tree(t, map[string]string{"skill.yaml": skill, "platform.yaml": platform,
			"workspace.yaml": "apiVersion: loadout.dev/v1alpha1\nkind: Workspace\nmetadata: {name: dev, namespace: team-a}\nspec:\n  activate: [{skill: pdf}]\n"}))
		mustContain(t, "manifest.json", data[contract.KeyManifest], `"identities"`, subject, `"trustedRoot"`)
		ctxDir, out := t.TempDir(), filepath.Join(t.TempDir(), "tree")
		writeFiles(t, ctxDir, data)
		_, stderr, err := run(t, "materialize", "--context-dir", ctxDir, "--out", out, "--source-cache", t.TempDir())
		if err != nil {
			return stderr + err.Error(), err
		}
		return out, nil
	}
	out, err := materialize(skillsigtest.ReleaseIdentity)
	if err != nil {
		t.Fatalf("the release workflow's skill: %s", out)
	}
	if _, err := os.Stat(filepath.Join(out, "skills", "pdf", "reference.md")); err != nil {
		t.Fatal(err)
	}
	if out, err := materialize("https://github.com/acme/skills/.github/workflows/other.yml@refs/heads/main"); err == nil || !strings.Contains(out, "signature UntrustedSigner") {
		t.Fatalf("trusting another workflow: %q", out)
	}
}

// packtestDescription is the description in tree's SKILL.md frontmatter.
func packtestDescription(t *testing.T, tree skillpack.Tree) string {
	t.Helper()
	f, ok := tree.File("SKILL.md")
	if !ok {
		t.Fatal("no SKILL.md")
	}
	for _, l := range strings.Split(string(f.Content), "\n") {
		if d, ok := strings.CutPrefix(l, "description:"); ok {
			return strings.Trim(strings.TrimSpace(d), `"'`)
		}
	}
	t.Fatal("no description")
	return ""
}
