package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/skillpack/packtest"
	"github.com/loadout-dev/loadout/internal/skillsig"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// `loadout push --sign-key` then `loadout materialize --skill-signers`: the
// skill signed by the trusted key materializes; the same skill pushed
// unsigned, or signed by another key, is refused with the reason.
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

	materialize := func(skill string) (string, error) {
		manifests := resourcestest.Tree(t, map[string]string{"skill.yaml": skill,
			"workspace.yaml": "apiVersion: loadout.dev/v1alpha1\nkind: Workspace\nmetadata: {name: dev, namespace: team-a}\nspec:\n  activate: [{skill: pdf}]\n"})
		data := previewData(t, "-f", manifests)
		ctxDir, out := t.TempDir(), filepath.Join(t.TempDir(), "tree")
		writeFiles(t, ctxDir, data)
		_, stderr, err := run(t, "materialize", "--context-dir", ctxDir, "--out", out, "--source-cache", t.TempDir(), "--skill-signers", signers)
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
			out, err := materialize(skill)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("materialize: %s", out)
				}
				if _, err := os.Stat(filepath.Join(out, "skills", "pdf", "reference.md")); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(out, c.reason) {
				t.Fatalf("materialize = %q, want refused with %q", out, c.reason)
			}
		})
	}
}
