package exthost

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// Hook variables are typed: a type error is a compile error (so the
// Extension's reconcile refuses it), never a `no such overload` on every
// call. Before the variables had real types, `size(turn.toolCalls)` (an int)
// compiled and failed at run time.
func TestCompileCEL_VariablesAreTyped_TypeErrorsRefusedAtCompile(t *testing.T) {
	checkCompileCases(t, []compileCase{
		{vocab.TurnEnd, "turn.toolCalls > 3", ""},
		{vocab.TurnEnd, "size(turn.toolCalls) > 3", "no matching overload for 'size' applied to '(int)'"},
		{vocab.TurnEnd, "turn.tools > 3", "undefined field 'tools'"},
		{vocab.TurnStart, "turn.index == 'first'", "no matching overload for '_==_' applied to '(int, string)'"},
		{vocab.Stop, "stop.active == 'yes'", "no matching overload"},
		{vocab.Stop, "stop.lastMessage", "not string"},
		{vocab.BeforeToolCall, "call.name.startsWith('mcp__') && call.arguments.path.startsWith('/etc')", ""},
		{vocab.BeforeToolCall, "size(call.name) > 1 && call.id != ''", ""},
		{vocab.AfterToolResult, "result.isError || result.content.all(c, !c.text.contains('secret'))", ""},
		{vocab.AfterToolResult, "result.content.exists(c, has(c.data) && c.mimeType == 'image/png')", ""},
		{vocab.AfterToolResult, "result.isError.contains('x')", "no matching overload"},
		{vocab.AfterToolResult, "result.details.exitCode == 0", ""},
		{vocab.SessionStart, "session.agentType == 'explorer' && workspace.namespace != '' && params.tier == 'x'", ""},
		{vocab.SessionStart, "session.user == 'x'", "undefined field 'user'"},
		{vocab.SessionStart, "sandboxed && cwd.startsWith('/')", ""},
		{vocab.AfterModelResponse, "response.stopReason == 'length' && model.provider == 'x'", ""},
		{vocab.UserInput, "prompt.source == 'extension' || size(prompt.text) < 100", ""},
	})
}

// The typed declarations change what is checked, not what runs: the typed
// expression reads the same lazily adapted maps at run time.
func TestCompileCEL_TypedVariablesEvaluateOverTheInput(t *testing.T) {
	h := mustCEL(t, vocab.TurnEnd, "turn.toolCalls > 3 && turn.index == 0 && turn.text.contains('x')")
	v, err := h.Evaluate(context.Background(), Input{Turn: &Turn{Index: 0, Text: "x", ToolCalls: 4}})
	if err != nil || !v.Allowed {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	h = mustCEL(t, vocab.AfterToolResult, "result.content.exists(c, has(c.data)) ? {'allow': false} : {}")
	v, err = h.Evaluate(context.Background(), Input{Result: &ToolResult{Content: []Content{{Type: "image", Data: "AA==", MimeType: "image/png"}}}})
	if err != nil || v.Allowed {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	v, err = h.Evaluate(context.Background(), Input{Result: &ToolResult{Content: []Content{{Type: "text", Text: "ok"}}}})
	if err != nil || !v.Allowed {
		t.Fatalf("verdict %+v, %v", v, err)
	}
}

// renderCELTypes is docs/hooks.md's "Variable types" tables.
func renderCELTypes() string {
	var b strings.Builder
	table := func(title string, rows [][2]string) {
		fmt.Fprintf(&b, "%s\n\n| variable | CEL type |\n|---|---|\n", title)
		for _, r := range rows {
			fmt.Fprintf(&b, "| `%s` | `%s` |\n", r[0], r[1])
		}
		b.WriteString("\n")
	}
	table("Every event:", CELVariableTypes(""))
	for _, e := range Events() {
		if rows := CELVariableTypes(e); len(rows) > 0 {
			table(fmt.Sprintf("`%s`:", e), rows)
		}
	}
	return b.String()
}

// docs/hooks.md tables every event's variables with the types the checker
// declares; this test keeps them the same.
func TestDocs_HookVariableTypesMatchTheDeclarations(t *testing.T) {
	raw, err := os.ReadFile("../../docs/hooks.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := renderCELTypes(); !bytes.Contains(raw, []byte(want)) {
		t.Fatalf("docs/hooks.md lacks the variable types as declared; the section should read:\n\n%s", want)
	}
}

// Every CEL hook in config/samples and in the docs' YAML examples compiles
// under the typed variables.
func TestCELExamples_SamplesAndDocsCompile(t *testing.T) {
	var sources []string
	samples, _ := filepath.Glob("../../config/samples/*.yaml")
	for _, f := range samples {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
			sources = append(sources, fmt.Sprintf("%s#%d", f, i), doc)
		}
	}
	docs, _ := filepath.Glob("../../docs/*.md")
	fence := regexp.MustCompile("(?s)```ya?ml\n(.*?)```")
	for _, f := range docs {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range fence.FindAllStringSubmatch(string(raw), -1) {
			sources = append(sources, fmt.Sprintf("%s block %d", f, i), m[1])
		}
	}
	compiled := 0
	for i := 0; i < len(sources); i += 2 {
		var doc any
		if yaml.Unmarshal([]byte(sources[i+1]), &doc) != nil {
			continue // a fragment that is not YAML on its own
		}
		walkHooks(doc, func(event, expr string) {
			compiled++
			if _, err := CompileCEL(vocab.HookEvent(event), expr, ""); err != nil {
				t.Errorf("%s: %s hook %q: %v", sources[i], event, expr, err)
			}
		})
	}
	if compiled < 5 {
		t.Fatalf("found only %d CEL hooks in the samples and docs: the walk is broken", compiled)
	}
}

// walkHooks calls f for every map with an event and a cel.expression.
func walkHooks(v any, f func(event, expr string)) {
	switch v := v.(type) {
	case map[string]any:
		if ev, ok := v["event"].(string); ok {
			if c, ok := v["cel"].(map[string]any); ok {
				if expr, ok := c["expression"].(string); ok && knownEvent(vocab.HookEvent(ev)) {
					f(ev, expr)
				}
			}
		}
		for _, e := range v {
			walkHooks(e, f)
		}
	case []any:
		for _, e := range v {
			walkHooks(e, f)
		}
	}
}
