package hostd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/claudecode"
	"github.com/loadout-dev/loadout/internal/exthost"
	"github.com/loadout-dev/loadout/internal/resources"
	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

// Claude Code and Codex get the tenants' text as SessionStart context,
// labelled with its namespace, since their managed memory holds only the
// platform's (docs/agents.md): hostd adds it for the command hooks, which ask
// (projectContext), and for Claude Code's http hook; Pi, which reads it
// from the tree, does not get it twice.
func TestSessionStart_ProjectContextIsTheTenantsLabelledText(t *testing.T) {
	r, err := resources.Render(resourcestest.PlantedInput())
	if err != nil {
		t.Fatal(err)
	}
	_, ts, _ := serveContext(t, r.Data, Options{Now: func() time.Time { return time.UnixMilli(42) }})

	labelled := func(what, text string) {
		t.Helper()
		_, after, ok := strings.Cut(text, resourcestest.PlantedHeading+"\n\n")
		if !ok {
			t.Fatalf("%s has no %q:\n%s", what, resourcestest.PlantedHeading, text)
		}
		resourcestest.MustContain(t, what, after, resourcestest.Planted()...)
		resourcestest.MustNotContain(t, what, text, resourcestest.PlatformRule)
	}
	var out EventResponse
	if code := post(t, ts.URL+"/v1/events/SessionStart", map[string]any{"session": map[string]any{"id": "s"}, "projectContext": true}, &out); code != 200 || !out.Allowed {
		t.Fatalf("SessionStart: %d %+v", code, out)
	}
	labelled("SessionStart context", out.Context)
	out = EventResponse{}
	if post(t, ts.URL+"/v1/events/SessionStart", map[string]any{"session": map[string]any{"id": "s"}}, &out); out.Context != "" {
		t.Errorf("SessionStart without projectContext (Pi) got context %q", out.Context)
	}
	// The command hooks' client asks for it.
	got, err := claudecode.HostdClient{URL: ts.URL}.Event(context.Background(), exthost.EventRequest{Event: vocab.SessionStart})
	if err != nil {
		t.Fatal(err)
	}
	labelled("the command hook's SessionStart", got.Context)
	// Claude Code's http hook.
	var answer claudecode.Output
	post(t, ts.URL+ClaudeCodeHookPath, `{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`, &answer)
	if answer.HookSpecificOutput == nil {
		t.Fatalf("http hook SessionStart: %+v", answer)
	}
	labelled("the http hook's additionalContext", answer.HookSpecificOutput.AdditionalContext)
}
