package resources

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/internal/contract"
)

// stepInput is one project root with a command template "ship" whose steps
// are given, a plain template "note", and a registry with bash and a denied
// tool.
func stepInput(steps ...contract.TemplateStep) Input {
	origin := func(o string) Origin { return Origin{Root: "project", Namespace: "team-a", Object: o} }
	return Input{
		Workspace: contract.WorkspaceRef{Namespace: "team-a", Name: "ws"},
		Roots: []Root{{Name: "project", Templates: []Template{
			{Name: "ship", Body: "Ship {{branch}}.", Origin: origin("ship"), Steps: steps},
			{Name: "note", Body: "Note for {{owner}}.", Origin: origin("note")},
		}}},
		Registry: contract.Registry{Tools: []contract.Tool{{Name: "bash", Builtin: true}, {Name: "rm", Builtin: true}}, Deny: []string{"rm"}},
	}
}

func publishedTemplates(t *testing.T, r *Result) map[string]contract.TemplateDoc {
	t.Helper()
	var doc contract.Templates
	if err := json.Unmarshal([]byte(r.Data[contract.KeyTemplates]), &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]contract.TemplateDoc{}
	for _, d := range doc.Templates {
		out[d.Name] = d
	}
	return out
}

func TestSteps_PublishedWithCommandVariablesAndPlanned(t *testing.T) { // R-TPL-5
	in := stepInput(
		contract.TemplateStep{Tool: "bash", Arguments: json.RawMessage(`{"command":"git log {{branch}} <&> {{since}}","timeout":10}`)},
		contract.TemplateStep{Render: true},
		contract.TemplateStep{Template: "note"},
	)
	r, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	ship := publishedTemplates(t, r)["ship"]
	if got := strings.Join(ship.Variables, ","); got != "branch,since,owner" {
		t.Fatalf("variables = %s, want the steps' in order: branch,since,owner", got)
	}
	if len(ship.Steps) != 3 || ship.Steps[0].Tool != "bash" || !ship.Steps[1].Render || ship.Steps[2].Template != "note" {
		t.Fatalf("steps not published as written: %+v", ship.Steps)
	}
	if got := strings.Join(r.Manifest.Templates[1].Variables, ","); r.Manifest.Templates[1].Name != "ship" || got != "branch,since,owner" {
		t.Fatalf("manifest template %+v", r.Manifest.Templates[1])
	}
	bodyOf := func(n string) (string, bool) {
		d, ok := publishedTemplates(t, r)[n]
		return d.Body, ok
	}
	plan, err := PlanCommand("ship", ship.Body, ship.Steps, bodyOf, map[string]string{"branch": "main", "since": "{{owner}}", "owner": "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(plan.Steps[0].Arguments); got != `{"command":"git log main <&> {{owner}}","timeout":10}` {
		t.Fatalf("filled arguments = %s (numbers as written, keys sorted, HTML unescaped, values never re-scanned)", got)
	}
	if plan.Text != "Ship main.\n\nNote for ops." || !plan.HasToolSteps() {
		t.Fatalf("plan = %+v", plan)
	}
	_, err = PlanCommand("ship", ship.Body, ship.Steps, bodyOf, map[string]string{"branch": "main", "owner": "ops"})
	var te *TemplateError
	if !errors.As(err, &te) || te.Template != "ship" || te.Variable != "since" {
		t.Fatalf("a variable only a tool step uses must still be required (R-TPL-2): %v", err)
	}
}

func TestSteps_TargetsMustExist(t *testing.T) { // R-TPL-5
	for _, tc := range []struct {
		name string
		step contract.TemplateStep
		want string
	}{
		{"unknown tool", contract.TemplateStep{Tool: "deploy"}, `template project/team-a/ship: steps[1].tool: tool "deploy" is not in the Workspace's registry`},
		{"denied tool", contract.TemplateStep{Tool: "rm"}, `steps[1].tool: tool "rm" is denied by the Workspace`},
		{"unknown template", contract.TemplateStep{Template: "nope"}, `steps[1].template: template "nope" is not in the catalog`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(stepInput(contract.TemplateStep{Render: true}, tc.step))
			var ie *InvalidResourceError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an InvalidResourceError with %q", err, tc.want)
			}
		})
	}
}

func TestSteps_ShapeIsChecked(t *testing.T) { // R-TPL-5
	many := make([]contract.TemplateStep, MaxSteps+1)
	for i := range many {
		many[i] = contract.TemplateStep{Render: true}
	}
	deep := `{"a":` + strings.Repeat("[", maxArgumentDepth+1) + strings.Repeat("]", maxArgumentDepth+1) + `}`
	for _, tc := range []struct {
		name  string
		steps []contract.TemplateStep
		want  string
	}{
		{"too many", many, "steps: has 17 steps, more than 16"},
		{"no action", []contract.TemplateStep{{}}, "steps[0]: must set exactly one of tool, render or template"},
		{"two actions", []contract.TemplateStep{{Tool: "bash", Render: true}}, "steps[0]: must set exactly one"},
		{"arguments without a tool", []contract.TemplateStep{{Template: "note", Arguments: json.RawMessage(`{}`)}}, "steps[0].arguments: belong to a tool step"},
		{"arguments not an object", []contract.TemplateStep{{Tool: "bash", Arguments: json.RawMessage(`["x"]`)}}, "steps[0].arguments: must be a JSON object"},
		{"arguments not JSON", []contract.TemplateStep{{Tool: "bash", Arguments: json.RawMessage(`{"a":`)}}, "steps[0].arguments: not valid JSON"},
		{"arguments nested too deep", []contract.TemplateStep{{Tool: "bash", Arguments: json.RawMessage(deep)}}, "nested more than 32 deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(stepInput(tc.steps...))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSteps_PlanIsBounded(t *testing.T) { // R-TPL-5
	steps := []contract.TemplateStep{
		{Tool: "bash", Arguments: json.RawMessage(`{"a":"{{x}}","b":"{{x}}"}`)},
		{Tool: "bash", Arguments: json.RawMessage(`{"a":"{{x}}","b":"{{x}}"}`)},
	}
	_, err := PlanCommand("big", "b", steps, func(string) (string, bool) { return "", false }, map[string]string{"x": strings.Repeat("y", MaxRenderedBytes/3)})
	if err == nil || !strings.Contains(err.Error(), "would exceed") {
		t.Fatalf("a plan over %d bytes must be refused: %v", MaxRenderedBytes, err)
	}
}

func TestSteps_NoStepsRendersTheBody(t *testing.T) { // R-TPL-5
	plan, err := PlanCommand("note", "Note for {{owner}}.", nil, nil, map[string]string{"owner": "ops"})
	if err != nil || plan.Text != "Note for ops." || plan.HasToolSteps() || len(plan.Steps) != 0 || plan.Rendered(time.UnixMilli(1)).Note != "" {
		t.Fatalf("plan = %+v, %v", plan, err)
	}
}

func TestSteps_ManyPlaceholdersOneLargeArgumentAreRefused(t *testing.T) { // R-TPL-5
	// A tenant's step repeats {{x}} in many strings: each alone fits, together
	// they would be gigabytes.
	var b strings.Builder
	b.WriteString(`{"a":[`)
	for i := range 4096 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"{{x}}"`)
	}
	b.WriteString(`]}`)
	steps := []contract.TemplateStep{{Tool: "bash", Arguments: json.RawMessage(b.String())}}
	_, err := PlanCommand("big", "b", steps, nil, map[string]string{"x": strings.Repeat("y", 1<<19)})
	if err == nil || !strings.Contains(err.Error(), "steps[0].arguments: the filled arguments would exceed") {
		t.Fatalf("got %v", err)
	}
}
