package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/contract"
)

func exampleInput() Input {
	return Input{
		Workspace:    contract.WorkspaceRef{Name: "dev", Namespace: "team-a"},
		Roots:        exampleRoots(),
		Instructions: []Instruction{{Body: "WORKSPACE-RULES", Origin: Origin{Root: "workspace", Namespace: "team-a", Object: "dev"}}},
		Activate:     []Activation{{Skill: "review", Files: []string{"checklist.md"}}},
		Registry: contract.Registry{Tools: []contract.Tool{{Name: "review_note", Description: "Record a note.", Extension: "review-extension",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}}},
	}
}

func TestPublish_ExampleActivatesOnlyProjectBody(t *testing.T) { // fixed example, R-CTX-2, R-CAT-4
	r, err := Render(exampleInput())
	if err != nil {
		t.Fatal(err)
	}
	prompt, manifest := r.Data[contract.KeySystemPrompt], r.Data[contract.KeyManifest]
	mustContain(t, "system-prompt.md", prompt, projectBody, "CHECKLIST", "review_note")
	mustNotContain(t, "system-prompt.md", prompt, platformBody, inactiveBody)
	mustNotContain(t, "manifest.json", manifest, projectBody, platformBody, inactiveBody, "CHECKLIST")
	if len(r.Data) != 4 {
		t.Fatalf("keys = %d, want the 4 of the contract", len(r.Data))
	}
	if r.Manifest.ActiveSkills[0].Name != "review" || r.Manifest.Templates[0].Variables[1] != "owner" || r.Manifest.Commands[0].Template != "review" {
		t.Fatalf("manifest = %+v", r.Manifest)
	}
}

func TestPublish_WorkspaceInstructionsBeforeRootInstructions(t *testing.T) { // R-CTX-1
	in := exampleInput()
	in.Roots[1].Instructions = []Instruction{{Body: "PLATFORM-RULES", Origin: Origin{Root: "platform", Path: "AGENTS.md"}}}
	in.Roots[0].Instructions = []Instruction{{Body: "PROJECT-RULES", Origin: Origin{Root: "project", Path: "AGENTS.md"}}}
	r, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Data[contract.KeySystemPrompt]
	if !(strings.Index(p, "WORKSPACE-RULES") < strings.Index(p, "PROJECT-RULES") && strings.Index(p, "PROJECT-RULES") < strings.Index(p, "PLATFORM-RULES")) {
		t.Fatalf("instruction order wrong:\n%s", p)
	}
	want := []string{"workspace/team-a/dev", "project:AGENTS.md", "platform:AGENTS.md"}
	if strings.Join(r.Manifest.Instructions, ",") != strings.Join(want, ",") {
		t.Fatalf("manifest instructions = %v", r.Manifest.Instructions)
	}
}

func TestPublish_HashFollowsDocumentedRule(t *testing.T) { // R-CAT-6, docs/context-contract.md
	r, err := Render(exampleInput())
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, k := range []string{contract.KeyManifest, contract.KeySkills, contract.KeySystemPrompt, contract.KeyTemplates} {
		v := r.Data[k]
		if k == contract.KeyManifest {
			v = strings.Replace(v, `"hash": "`+r.Hash+`"`, `"hash": ""`, 1)
		}
		h.Write([]byte(k + "\n" + strconv.Itoa(len(v)) + "\n" + v))
	}
	if want := "sha256:" + hex.EncodeToString(h.Sum(nil)); r.Hash != want || r.Manifest.Hash != want {
		t.Fatalf("hash = %s, want %s", r.Hash, want)
	}
	if !strings.Contains(r.Data[contract.KeyManifest], `"hash": "`+r.Hash+`"`) {
		t.Fatal("manifest.json does not carry the hash")
	}
	if r.Bytes != DataBytes(r.Data) {
		t.Fatalf("bytes = %d", r.Bytes)
	}
}

func TestPublish_SchemaKeyOrderDoesNotChangeBytes(t *testing.T) { // R-CAT-6
	a := exampleInput()
	b := exampleInput()
	b.Registry.Tools[0].InputSchema = json.RawMessage(`{"properties":{"text":{"type":"string"}},"type":"object"}`)
	ra, _ := Render(a)
	rb, _ := Render(b)
	if ra.Hash != rb.Hash {
		t.Fatal("input schema key order changed the hash")
	}
}

func TestPublish_OverBudgetIsTooLargeAndReturnsNothing(t *testing.T) { // R-CTX-4
	in := exampleInput()
	in.MaxContextBytes = 100
	r, err := Render(in)
	var tl *TooLargeError
	if !errors.As(err, &tl) || r != nil || tl.Max != 100 || tl.Bytes <= 100 || tl.Reason() != vocab.ReasonContextTooLarge {
		t.Fatalf("r = %v, err = %v", r, err)
	}
}

func TestPublish_DoubleActivationRefused(t *testing.T) { // R-CTX-3
	in := exampleInput()
	in.Activate = append(in.Activate, Activation{Skill: "review"})
	var ae *ActivationError
	if _, err := Render(in); !errors.As(err, &ae) {
		t.Fatalf("err = %v", err)
	}
}
