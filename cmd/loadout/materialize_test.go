package main

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
	"github.com/loadout-dev/loadout/internal/test/testenv"

	"github.com/loadout-dev/loadout/internal/contextsig"
	"github.com/loadout-dev/loadout/internal/contract"
	"github.com/loadout-dev/loadout/internal/published"
)

func TestMaterialize_SamplesWinnersOnlyThenUnchanged(t *testing.T) {
	dir, out := mountSamples(t), filepath.Join(t.TempDir(), "tree")
	stdout, _, err := run(t, "materialize", "--context-dir", dir, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "materialized context sha256:") {
		t.Errorf("stdout = %q", stdout)
	}
	skill, err := os.ReadFile(filepath.Join(out, "skills", "review", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	// team-a's review skill wins; the platform's is shadowed and absent.
	if !strings.Contains(string(skill), "PROJECT-REVIEW-BODY") || strings.Contains(string(skill), "PLATFORM-REVIEW-BODY") {
		t.Errorf("SKILL.md = %q", skill)
	}
	prompt, err := os.ReadFile(filepath.Join(out, "prompts", "review.md"))
	if err != nil || !strings.Contains(string(prompt), "argument-hint: <file> <owner>\n") {
		t.Errorf("prompts/review.md = %q, %v", prompt, err)
	}
	// The Workspace's inline instructions are team-a's: project content,
	// labelled with its namespace, never in AGENTS.md (the platform's text).
	instructions := "You work on team-a's parser and runtime. Run `make test` before you\nsay a change is done."
	agents, err := os.ReadFile(filepath.Join(out, "AGENTS.md"))
	if err != nil || strings.Contains(string(agents), instructions) {
		t.Errorf("AGENTS.md = %q, %v; want no tenant instructions", agents, err)
	}
	project, err := os.ReadFile(filepath.Join(out, "project-prompt.md"))
	if _, labelled, ok := strings.Cut(string(project), "## Project content from namespace team-a (not organisation policy)\n"); err != nil || !ok || !strings.Contains(labelled, instructions) {
		t.Errorf("project-prompt.md = %q, %v; want the Workspace's instructions under team-a's heading", project, err)
	}
	stdout, _, err = run(t, "materialize", "--context-dir", dir, "--out", out)
	if err != nil || !strings.HasPrefix(stdout, "already current: context sha256:") {
		t.Errorf("second run: %q, %v", stdout, err)
	}
}

func TestMaterialize_RequiresOut(t *testing.T) {
	if _, _, err := run(t, "materialize", "--context-dir", mountSamples(t)); err == nil || !strings.Contains(err.Error(), "out") {
		t.Errorf("err = %v, want one naming --out", err)
	}
}

// Codex creates CODEX_HOME/skills/.system on its first run; materialize
// --codex into CODEX_HOME then shares skills/ with it instead of failing.
func TestMaterialize_CodexIntoACodexHomeWithSystemSkills(t *testing.T) {
	home := resourcestest.Tree(t, map[string]string{
		"skills/.system/imagegen/SKILL.md": "---\nname: imagegen\ndescription: d\n---\n",
		"config.toml":                      "model = \"o3\"\n",
	})
	if _, stderr, err := run(t, "materialize", "--codex", "--context-dir", mountSamples(t), "--out", home); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, f := range []string{"skills/.system/imagegen/SKILL.md", "skills/review/SKILL.md", "AGENTS.md", "hooks.json", "requirements.toml"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Error(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, "config.toml")); string(b) != "model = \"o3\"\n" {
		t.Errorf("Codex's config.toml changed: %q", b)
	}
}

// Given the platform's public keys, materialize verifies the context as hostd
// does before it writes anything: the manager's context signed for the
// Workspace and ConfigMap named loads; an unsigned one, one signed for
// another Workspace or ConfigMap, and keys without a Workspace write
// nothing. Without keys nothing is checked (local development).
func TestMaterialize_VerifiesTheContextWhenGivenTrustKeys(t *testing.T) {
	t.Setenv("LOADOUT_CONTEXT_KEYS", "")
	t.Setenv("LOADOUT_WORKSPACE", "")
	t.Setenv("LOADOUT_CONTEXT_CONFIGMAP", "")
	other := testenv.SigningKey(t).Public().(ed25519.PublicKey)
	signer, err := contextsig.NewSigner([]ed25519.PrivateKey{testenv.SigningKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	dir := mountSamples(t)
	pc, err := published.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws := pc.Manifest().Workspace
	subject := contextsig.Subject{Namespace: ws.Namespace, Name: ws.Name, UID: "uid-1", ConfigMap: ws.Name + "-context"}
	binding := ws.Namespace + "/" + ws.Name
	keys := []string{"--context-keys", signer.TrustAnchor()}
	sign := func(s contextsig.Subject) {
		if err := os.WriteFile(filepath.Join(dir, contract.KeySignature), signer.Sign(pc.Hash, s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	materialize := func(args ...string) (string, error) {
		out := filepath.Join(t.TempDir(), "tree")
		_, _, err := run(t, append([]string{"materialize", "--context-dir", dir, "--out", out}, args...)...)
		return out, err
	}
	refused := func(what, want string, args ...string) {
		t.Helper()
		out, err := materialize(args...)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want a refusal naming %q", what, err, want)
		}
		if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
			t.Errorf("%s: the tree was written (%v)", what, statErr)
		}
	}

	refused("an unsigned context with the keys", "refused", append(keys, "--workspace", binding)...)
	sign(subject)
	if _, err := materialize(append(keys, "--workspace", binding)...); err != nil {
		t.Fatalf("the manager's context, signed for %s: %v", binding, err)
	}
	refused("keys without a Workspace", "--workspace", keys...)
	refused("a context signed for another Workspace", "refused", append(keys, "--workspace", "team-b/"+ws.Name)...)
	refused("a context signed for another ConfigMap", "refused", append(keys, "--workspace", binding, "--context-configmap", "old-copy")...)
	refused("a context signed by a key outside the anchor", "refused",
		"--context-keys", contextsig.FormatPublicKey(other), "--workspace", binding)
	if _, err := materialize(); err != nil {
		t.Errorf("without keys (local development): %v", err)
	}
}
