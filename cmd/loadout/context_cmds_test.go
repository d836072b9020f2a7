package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mountSamples writes the samples' published data as a context directory.
func mountSamples(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range previewData(t, "-f", samplesDir) {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
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
