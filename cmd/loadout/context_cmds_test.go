package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mountSamples writes the samples' published data as a context directory.
func mountSamples(t *testing.T) string {
	t.Helper()
	return previewDir(t, "-f", samplesDir)
}

func TestRender_SampleTemplateIntoUserMessage(t *testing.T) { // R-TPL-1..3, fixed example
	dir := mountSamples(t)
	out, _, err := run(t, "render", "review", "--context-dir", dir, "--set", "file=src/parser.ts", "--set", "owner=runtime", "--set", "extra=x", "--timestamp", "42")
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Role      string
		Content   []struct{ Type, Text string }
		Timestamp int64
	}
	if err := json.Unmarshal([]byte(out), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Role != "user" || msg.Timestamp != 42 || msg.Content[0].Type != "text" || msg.Content[0].Text != "Review src/parser.ts for runtime. Focus on src/parser.ts." {
		t.Fatalf("message = %s", out)
	}
	_, _, err = run(t, "render", "review", "--context-dir", dir, "--set", "file=x")
	if err == nil || !strings.Contains(err.Error(), `"owner"`) {
		t.Fatalf("missing owner: err = %v", err)
	}
}

func TestActivate_SampleSkillWithChecklist(t *testing.T) { // R-ACT-1, R-ACT-3, R-ACT-4, fixed example
	dir := mountSamples(t)
	out, _, err := run(t, "activate", "review", "--context-dir", dir, "--file", "checklist.md", "--file", "checklist.md")
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Name, Body string
		Files      []struct{ Request, Source, Content string }
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if a.Name != "review" || !strings.Contains(a.Body, "PROJECT-REVIEW-BODY") || len(a.Files) != 1 || a.Files[0].Request != "checklist.md" {
		t.Fatalf("activation = %s", out)
	}
	if _, _, err := run(t, "activate", "review", "--context-dir", dir, "--file", "../etc/passwd"); err == nil {
		t.Fatal("traversal accepted")
	}
}

// A command's render prints its plan, arguments filled, and runs nothing.
func TestRender_CommandPrintsPlanWithoutRunning(t *testing.T) { // R-TPL-5
	src := copySamples(t, nil)
	marker := filepath.Join(t.TempDir(), "ran")
	command := `apiVersion: loadout.dev/v1alpha1
kind: Template
metadata:
  name: ship
  namespace: team-a
spec:
  body: "Review the diff of {{file}}."
  steps:
  - tool: review_note
    arguments: {text: "touch ` + marker + ` && git diff {{file}}", line: 30}
  - render: true
  - template: review
`
	if err := os.WriteFile(filepath.Join(src, "team-a_template_ship.yaml"), []byte(command), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := previewDir(t, "-f", src)
	out, _, err := run(t, "render", "ship", "--context-dir", dir, "--set", "file=a.go", "--set", "owner=bob", "--timestamp", "42")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Content []struct{ Text string }
		Steps   []struct {
			Tool      string
			Arguments json.RawMessage
			Template  string
			Text      string
		}
		Note string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var args bytes.Buffer
	if len(got.Steps) > 0 {
		_ = json.Compact(&args, got.Steps[0].Arguments)
	}
	if len(got.Steps) != 3 || got.Steps[0].Tool != "review_note" || args.String() != `{"line":30,"text":"touch `+marker+` && git diff a.go"}` ||
		got.Steps[1].Text != "Review the diff of a.go." || got.Steps[2].Template != "review" {
		t.Fatalf("plan = %s", out)
	}
	if got.Content[0].Text != "Review the diff of a.go.\n\nReview a.go for bob. Focus on a.go." || !strings.Contains(got.Note, "not run here") {
		t.Fatalf("message = %s", out)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("render ran the tool step: %v", err)
	}
}
