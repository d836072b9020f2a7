package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1"
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
	r, err := Publish(exampleInput())
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
	r, err := Publish(in)
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
	r, err := Publish(exampleInput())
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
	ra, _ := Publish(a)
	rb, _ := Publish(b)
	if ra.Hash != rb.Hash {
		t.Fatal("input schema key order changed the hash")
	}
}

func TestPublish_OverBudgetIsTooLargeAndReturnsNothing(t *testing.T) { // R-CTX-4
	in := exampleInput()
	in.MaxContextBytes = 100
	r, err := Publish(in)
	var tl *TooLargeError
	if !errors.As(err, &tl) || r != nil || tl.Max != 100 || tl.Bytes <= 100 || tl.Reason() != v1alpha1.ReasonContextTooLarge {
		t.Fatalf("r = %v, err = %v", r, err)
	}
}

func TestPublish_DoubleActivationRefused(t *testing.T) { // R-CTX-3
	in := exampleInput()
	in.Activate = append(in.Activate, Activation{Skill: "review"})
	var ae *ActivationError
	if _, err := Publish(in); !errors.As(err, &ae) {
		t.Fatalf("err = %v", err)
	}
}

// mountLikeKubelet lays data out as a ConfigMap volume does: files in a
// timestamped directory, ..data pointing at it, keys symlinked through ..data.
func mountLikeKubelet(t *testing.T, data map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	snap := filepath.Join(dir, "..2026_01_01_00_00_00.000000001")
	if err := os.Mkdir(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(snap, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(snap), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPublishedContext_RenderActivateFromMountedConfigMap(t *testing.T) { // activation, templates, fixed example
	r, err := Publish(exampleInput())
	if err != nil {
		t.Fatal(err)
	}
	pc, err := LoadContextDir(mountLikeKubelet(t, r.Data))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := pc.Render("review", map[string]string{"file": "src/parser.ts", "owner": "runtime"}, time.UnixMilli(5))
	if err != nil || msg.Content[0].Text != "Review src/parser.ts for runtime. Focus on src/parser.ts." || msg.Role != "user" || msg.Timestamp != 5 {
		t.Fatalf("msg = %+v, err = %v", msg, err)
	}
	var te *TemplateError
	if _, err := pc.Render("review", map[string]string{"file": "x"}, time.Now()); !errors.As(err, &te) || te.Variable != "owner" || te.Template != "review" {
		t.Fatalf("missing arg: err = %v", err)
	}
	a, err := pc.Activate("review", []string{"checklist.md", "checklist.md"})
	if err != nil || a.Body != projectBody || len(a.Files) != 1 || a.Files[0].Content != "CHECKLIST" {
		t.Fatalf("activate = %+v, %v", a, err)
	}
	b, _ := json.Marshal(a)
	mustContain(t, "activation JSON", string(b), `"name":"review"`, `"request":"checklist.md"`, `"source":"checklist.md"`)
	if _, err := pc.Activate("review", []string{"../x"}); err == nil {
		t.Fatal("traversal accepted")
	}
	m := pc.Manifest()
	m.Catalog[0].Name = "mutated"
	if pc.Manifest().Catalog[0].Name == "mutated" {
		t.Fatal("Manifest() shares its lists")
	}
}

func TestPublishedContext_InconsistentDataRefused(t *testing.T) { // R-CAT-6
	r, _ := Publish(exampleInput())
	r.Data[contract.KeySkills] = strings.Replace(r.Data[contract.KeySkills], projectBody, "TAMPERED", 1)
	if _, err := ParseContext(r.Data); err == nil {
		t.Fatal("tampered data accepted")
	}
}

func TestPublishedContext_InstructionsTextIsThePromptsHead(t *testing.T) { // R-CTX-1
	for _, tc := range []struct {
		name         string
		instructions []Instruction
		want         string
	}{
		{"two instructions", []Instruction{{Body: "FIRST\n\n# Skills\n"}, {Body: "SECOND"}}, "FIRST\n\n# Skills\n\nSECOND"},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := exampleInput()
			in.Instructions = tc.instructions
			in.Roots[1].Instructions = nil
			r, err := Publish(in)
			if err != nil {
				t.Fatal(err)
			}
			pc, err := ParseContext(r.Data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pc.InstructionsText()
			if err != nil || got != tc.want {
				t.Errorf("InstructionsText() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	r, err := Publish(exampleInput())
	if err != nil {
		t.Fatal(err)
	}
	pc, err := ParseContext(r.Data)
	if err != nil {
		t.Fatal(err)
	}
	pc.SystemPrompt = strings.Replace(pc.SystemPrompt, "CHECKLIST", "EDITED", 1)
	if _, err := pc.InstructionsText(); err == nil {
		t.Error("a prompt whose tail the manifest does not describe gave instructions")
	}
}
