package exthost

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
)

// FuzzCELHook feeds arbitrary expressions and call arguments through compile
// and the executor. Whatever the input, compiling either fails cleanly or the
// call gets exactly one answer: the core ran once (allowed) or a paired
// blocked result came back; nothing panics (rule R-HK-3).
func FuzzCELHook(f *testing.F) {
	for _, seed := range []struct{ expr, args string }{
		{"!has(call.arguments.text) || !call.arguments.text.contains('SECRET')", `{"text":"SECRET"}`},
		{"call.arguments.n > 3.0", `{"n":4}`},
		{"call.arguments.n > 3.0", `{"n":"four"}`},
		{"call.arguments.items.all(x, x != null)", `{"items":[1,null,"a",{"b":[]}]}`},
		{"size(call.arguments) < 100", `{}`},
		{"call.name.matches('^[a-z_]+$')", `{"x":1e308}`},
		{"call.arguments.text.split(' ').exists(w, w == 'rm')", `{"text":"rm -rf /"}`},
		{"workspace.namespace == 'team-a'", `null`},
		{"1/0 == 1", `{}`},
		{"!shell.commands(call.arguments.text).exists(c, c.name == 'rm' && c.hasFlag('r', 'recursive') && c.hasFlag('f', 'force'))", `{"text":"sudo bash -c 'rm -fr /'"}`},
		{"shell.commands(call.arguments.text).all(c, c.argv.size() < 3)", `{"text":"a b | c $(d e f) 'g"}`},
		{"call.(", `{}`},
		{"{'arguments': {'text': call.arguments.text + ' -dry-run'}}", `{"text":"apply"}`},
		{"call.arguments.v", `{"v":{"ask":true,"arguments":{"a":[1,{"b":null}]}}}`},
		{"{'allow': size(call.arguments) > 0, 'message': 'empty'}", `{}`},
	} {
		f.Add(seed.expr, seed.args)
	}
	f.Fuzz(func(t *testing.T, expr, args string) {
		handler, err := CompileCEL(vocab.BeforeToolCall, expr, "denied")
		if err != nil {
			return
		}
		var arguments map[string]any
		_ = json.Unmarshal([]byte(args), &arguments)
		h := newTestHost()
		mustLoad(t, h, factorySource("fuzz", nil, hookFactory(Hook{Name: "fuzz", Event: vocab.BeforeToolCall, Handler: handler})))
		core := &coreCounter{}
		c := ToolCall{ID: "f", Name: "fuzz_tool", Arguments: arguments}
		r, _ := h.Execute(context.Background(), c, core.run)
		if r.ToolCallID != "f" || r.ToolName != "fuzz_tool" {
			t.Fatalf("result not paired: %+v", r)
		}
		if ran := core.calls.Load(); ran > 1 || (ran == 0) != r.IsError {
			t.Fatalf("core ran %d times, isError %v", ran, r.IsError)
		}
	})
}

// FuzzDecodeManifest: a service's manifest is untrusted input.
