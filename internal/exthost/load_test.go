package exthost

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

func TestLoad_UntrustedNeverImports_REXT1(t *testing.T) {
	h := newTestHost("bash")
	var imports atomic.Int32
	before := h.Registry()
	out := h.Load(context.Background(), factorySource("spy", &imports, func(api API) error {
		api.RegisterTool(Tool{Name: "spy_tool"})
		return nil
	}), false)

	if imports.Load() != 0 {
		t.Fatalf("import spy saw %d calls for an untrusted extension", imports.Load())
	}
	if out.State != vocab.ExtensionSkippedUntrusted || out.Reason != ReasonUntrusted {
		t.Fatalf("outcome = %+v", out)
	}
	if !reflect.DeepEqual(before, h.Registry()) {
		t.Fatalf("registry changed for an untrusted extension")
	}
}

func TestLoad_TrustImportFactoryCommitOrder_REXT1(t *testing.T) {
	h := newTestHost()
	var steps []string
	src := Source{ID: "ordered", Import: func(context.Context, Env) (Factory, error) {
		steps = append(steps, "import")
		return func(api API) error {
			steps = append(steps, "factory")
			if len(h.Registry().Tools) != 0 {
				t.Error("tool visible before commit")
			}
			api.RegisterTool(Tool{Name: "t"})
			return nil
		}, nil
	}}
	out := h.Load(context.Background(), src, true)
	if out.State != vocab.ExtensionLoaded || !reflect.DeepEqual(out.Tools, []string{"t"}) {
		t.Fatalf("outcome = %+v", out)
	}
	if strings.Join(steps, ",") != "import,factory" {
		t.Fatalf("steps = %v", steps)
	}
	if got := h.Registry().Tools; len(got) != 1 || got[0].Extension != "ordered" {
		t.Fatalf("tools after commit = %+v", got)
	}
}

// toolsThenHook stages the tools, in order, then a hook "h" on event whose
// handler is the test's recorder.
func toolsThenHook(event vocab.HookEvent, tools ...string) func(*recorder) Factory {
	return func(r *recorder) Factory {
		return func(api API) error {
			for _, name := range tools {
				api.RegisterTool(Tool{Name: name})
			}
			api.On(Hook{Name: "h", Event: event, Handler: r})
			return nil
		}
	}
}

// Every failed load must leave the registry byte-for-byte as it was and its
// staged hooks uncalled (rule R-EXT-2).
func TestLoad_FailureLeavesNoLeftovers_REXT2(t *testing.T) {
	tests := []struct {
		name    string
		id      string
		factory func(staged *recorder) Factory
		reason  string
	}{
		{"factory error", "broken", func(r *recorder) Factory {
			return func(api API) error {
				api.RegisterTool(Tool{Name: "broken_tool"})
				api.On(Hook{Name: "h", Event: vocab.BeforeToolCall, Handler: r})
				return errors.New("boom")
			}
		}, ReasonFactoryFailed},
		{"factory panic", "panicky", func(r *recorder) Factory {
			return func(api API) error {
				api.On(Hook{Name: "h", Event: vocab.BeforeToolCall, Handler: r})
				panic("kaboom")
			}
		}, ReasonFactoryFailed},
		{"collides with built-in", "shadow", toolsThenHook(vocab.BeforeToolCall, "fresh_tool", "bash"), ReasonToolCollision},
		{"collides with earlier extension", "copycat", toolsThenHook(vocab.AfterToolResult, "review_note"), ReasonToolCollision},
		{"duplicate inside stage", "twice", toolsThenHook(vocab.BeforeToolCall, "dup", "dup"), ReasonDuplicateTool},
		{"id already committed", "review-extension", func(r *recorder) Factory {
			return hookFactory(Hook{Name: "h", Event: vocab.BeforeToolCall, Handler: r})
		}, ReasonAlreadyLoaded},
		{"hook without handler", "nohandler", func(r *recorder) Factory {
			return func(api API) error {
				api.On(Hook{Name: "h", Event: vocab.BeforeToolCall, Handler: r})
				api.On(Hook{Name: "h2", Event: vocab.BeforeToolCall})
				return nil
			}
		}, ReasonInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newTestHost("bash", "read")
			mustLoad(t, h, factorySource("review-extension", nil, func(api API) error {
				api.RegisterTool(Tool{Name: "review_note"})
				api.On(Hook{Name: "audit", Event: vocab.AfterToolResult, Handler: allow()})
				return nil
			}))
			before := testenv.JSON(t, h.Registry())
			beforeIDs := h.Extensions()

			staged := allow()
			out := h.Load(context.Background(), factorySource(tt.id, nil, tt.factory(staged)), true)
			if out.State != vocab.ExtensionRejected || out.Reason != tt.reason {
				t.Fatalf("outcome = %+v, want Rejected/%s", out, tt.reason)
			}
			if out.Message == "" {
				t.Error("rejection without a message")
			}
			if got := testenv.JSON(t, h.Registry()); got != before {
				t.Fatalf("registry changed:\nbefore %s\nafter  %s", before, got)
			}
			if !reflect.DeepEqual(beforeIDs, h.Extensions()) {
				t.Fatalf("committed ids changed: %v", h.Extensions())
			}
			core := &coreCounter{}
			for _, name := range []string{"bash", "review_note", "fresh_tool", "dup"} {
				h.Execute(context.Background(), call("c-"+name, name, "x"), core.run)
			}
			if staged.calls.Load() != 0 {
				t.Fatalf("a staged hook of a rejected extension was called %d times", staged.calls.Load())
			}
		})
	}
}

func TestLoad_ImportFailureRejects_REXT1(t *testing.T) {
	h := newTestHost()
	before := testenv.JSON(t, h.Registry())
	out := h.Load(context.Background(), Source{ID: "x", Import: func(context.Context, Env) (Factory, error) {
		return nil, errors.New("unreachable")
	}}, true)
	if out.State != vocab.ExtensionRejected || out.Reason != ReasonImportFailed {
		t.Fatalf("outcome = %+v", out)
	}
	if testenv.JSON(t, h.Registry()) != before {
		t.Fatal("registry changed")
	}
}

// An author who keeps the API after the factory returned cannot write into a
// stage, committed or not, and API exposes nothing of staging (rule R-EXT-3).
func TestLoad_AuthorCannotReachStageAfterFactory_REXT3(t *testing.T) {
	h := newTestHost()
	var kept API
	mustLoad(t, h, factorySource("sneaky", nil, func(api API) error {
		kept = api
		api.RegisterTool(Tool{Name: "legit"})
		return nil
	}))
	kept.RegisterTool(Tool{Name: "late"})
	kept.On(Hook{Name: "late", Event: vocab.BeforeToolCall, Handler: allow()})
	kept.SetPromptGuide("late guide")
	reg := h.Registry()
	if len(reg.Tools) != 1 || len(reg.Hooks) != 0 || len(reg.PromptGuides) != 0 {
		t.Fatalf("late registrations leaked: %+v", reg)
	}

	apiType := reflect.TypeFor[API]()
	for i := range apiType.NumMethod() {
		name := strings.ToLower(apiType.Method(i).Name)
		if strings.Contains(name, "commit") || strings.Contains(name, "stage") || strings.Contains(name, "seal") {
			t.Errorf("API exposes %s", apiType.Method(i).Name)
		}
	}
}

func TestLoad_CommitIsAllOrNothingAndOrdered_REXT2(t *testing.T) {
	h := newTestHost("bash")
	mustLoad(t, h, factorySource("one", nil, func(api API) error {
		api.RegisterTool(Tool{Name: "a", Description: "A", ReadOnly: true, InputSchema: []byte(`{"type":"object"}`)})
		api.On(Hook{Name: "first", Event: vocab.BeforeToolCall, Handler: mustCEL(t, vocab.BeforeToolCall, "true")})
		api.RegisterMessageType("one/note", true)
		api.SetPromptGuide("use a")
		return nil
	}))
	mustLoad(t, h, factorySource("two", nil, func(api API) error {
		api.RegisterTool(Tool{Name: "b"})
		api.On(Hook{Name: "second", Event: vocab.AfterToolResult, Tools: []string{"b"}, Handler: mustCEL(t, vocab.AfterToolResult, "!result.isError")})
		return nil
	}))
	got := testenv.JSON(t, h.Registry())
	want := `{"tools":[{"name":"bash","description":"bash tool","builtin":true},` +
		`{"name":"a","description":"A","extension":"one","readOnly":true,"inputSchema":{"type":"object"}},` +
		`{"name":"b","extension":"two"}],` +
		`"hooks":[{"extension":"one","name":"first","event":"BeforeToolCall","timeoutSeconds":10,"cel":{"expression":"true"},"namespace":"team-a"},` +
		`{"extension":"two","name":"second","event":"AfterToolResult","tools":["b"],"timeoutSeconds":10,"cel":{"expression":"!result.isError"},"namespace":"team-a"}],` +
		`"messageTypes":[{"extension":"one","type":"one/note","inContext":true}],` +
		`"promptGuides":[{"extension":"one","text":"use a"}],"extensions":["one","two"]}`
	if got != want {
		t.Fatalf("registry\n got %s\nwant %s", got, want)
	}
	if again := testenv.JSON(t, h.Registry()); again != got {
		t.Fatal("registry snapshot is not deterministic")
	}
}

func mustCEL(t testing.TB, event vocab.HookEvent, expr string) Handler {
	t.Helper()
	h, err := CompileCEL(event, expr, "")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// One Prepared commits into many hosts, each deciding the commit checks
// against its own registry (rule R-EXT-2): the import and factory ran once,
// and no commit changes what the next one commits.
func TestPrepare_OneImportCommitsIntoManyHostsREXT2(t *testing.T) {
	var imports atomic.Int32
	src := factorySource("guard", &imports, func(api API) error {
		api.RegisterTool(Tool{Name: "note"})
		api.On(Hook{Name: "h", Event: eventBefore, Handler: allow()})
		return nil
	})
	src.Imposed = true
	p := newTestHost().Prepare(context.Background(), src, true)
	for _, h := range []*Host{newTestHost("bash"), newTestHost()} {
		if out := h.Commit(p); out.State != vocab.ExtensionLoaded || !reflect.DeepEqual(out.Tools, []string{"note"}) {
			t.Fatalf("commit into a host: %+v", out)
		}
	}
	free, clash := newTestHost("bash"), newTestHost("note")
	if out := clash.Commit(p); out.State != vocab.ExtensionRejected || out.Reason != ReasonToolCollision {
		t.Fatalf("commit into a host whose built-in takes the tool: %+v", out)
	}
	if len(clash.Registry().Hooks) != 0 {
		t.Fatal("a rejected commit left hooks behind")
	}
	if out := free.Commit(p); out.State != vocab.ExtensionLoaded {
		t.Fatalf("commit after a rejected one: %+v", out)
	}
	if out := free.Commit(p); out.Reason != ReasonAlreadyLoaded {
		t.Fatalf("second commit into one host: %+v", out)
	}
	if imports.Load() != 1 {
		t.Fatalf("%d imports, want 1", imports.Load())
	}
	skipped := newTestHost().Prepare(context.Background(), src, false)
	if out := free.Commit(skipped); out.State != vocab.ExtensionSkippedUntrusted || imports.Load() != 1 {
		t.Fatalf("untrusted: %+v after %d imports", out, imports.Load())
	}
}
