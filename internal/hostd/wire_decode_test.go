package hostd

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/exthost"
)

// TestDecodeCall_ArgumentsAsEncodingJSONDecodesThem proves that the
// arguments hooks, input schemas and rewrites see are the values
// encoding/json gave them before jsonlimit.Decode decoded them: nested, unicode,
// escapes, invalid UTF-8, numbers, keys differing by case, and the rest of
// the body alike.
func TestDecodeCall_ArgumentsAsEncodingJSONDecodesThem(t *testing.T) {
	for _, args := range []string{
		`{}`,
		`{"command":"ls -la","cwd":"/work"}`,
		`{"a":{"b":[1,[2,[3,{}]],{"c":null}]},"d":[],"e":[{},{}]}`,
		`{"text":"caf\u00e9 ☕ 漢字 \ud83d\ude00 \ud800","esc":"\" \\ \/ \b \f \n \r \t"}`,
		"{\"bad\":\"\xff\xfe\",\"\xc3\x28\":1}",
		`{"n":[0,-0,1.5e3,-2E-2,1e308,123456789012345678901234567890,7]}`,
		`{"Path":"/a","path":"/b"}`,
		`{"flags":[true,false,null],"big":"` + strings.Repeat("x", 4096) + `"}`,
	} {
		body := `{"call":{"id":"c1","name":"bash","arguments":` + args + `},"acceptArguments":true,"headless":true,"session":{"id":"s1"},"cwd":"/w",` +
			`"result":{"toolCallId":"c1","toolName":"bash","isError":false,"content":[{"type":"text","text":"ok"}],"details":{"k":[1,"2"]}}}`
		var want CallRequest
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		got, err := DecodeCall(strings.NewReader(body), true)
		if err != nil {
			t.Fatalf("DecodeCall(%s): %v", args, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeCall(%s) =\n%#v\nwant\n%#v", args, got, want)
		}
		// A runnable tool's call (/v1/tools/{name}) likewise.
		var wantTool ToolRequest
		if err := json.Unmarshal([]byte(body), &wantTool); err != nil {
			t.Fatal(err)
		}
		gotTool, err := decodeToolRequest(strings.NewReader(body))
		if err != nil || !reflect.DeepEqual(gotTool, wantTool) {
			t.Errorf("decodeToolRequest(%s) = %#v, %v; want %#v", args, gotTool, err, wantTool)
		}
	}
}

// TestDecodeCall_RefusesDuplicateAndMistypedArguments: a key named twice at
// any depth, in the arguments or elsewhere, and arguments that are not an
// object are refused with a clear error, as before.
func TestDecodeCall_RefusesDuplicateAndMistypedArguments(t *testing.T) {
	for body, want := range map[string]string{
		`{"call":{"id":"1","name":"bash","arguments":{"path":"/tmp/x","path":"/etc/passwd"}}}`: `duplicate key "path"`,
		`{"call":{"id":"1","name":"bash","arguments":{"l":[{"p":1,"p\u0020":2,"p":3}]}}}`:      `duplicate key "p"`,
		`{"call":{"id":"1","name":"bash","id":"2","arguments":{}}}`:                            `duplicate key "id"`,
		`{"call":{"id":"1","name":"bash","arguments":["ls"]}}`:                                 "cannot unmarshal array",
		`{"call":{"id":"1","name":"bash","arguments":{"n":1e999}}}`:                            "number 1e999",
		`{"call":{"id":"1","name":"bash","arguments":{}}} {}`:                                  "trailing data",
	} {
		_, err := DecodeCall(strings.NewReader(body), false)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeCall(%s) = %v, want an error saying %q", body, err, want)
		}
		if _, err := decodeToolRequest(strings.NewReader(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("decodeToolRequest(%s) = %v, want an error saying %q", body, err, want)
		}
	}
}

// TestCallWireCarriesEveryToolCallField fails when exthost.ToolCall gains a
// field that callWire (the shape DecodeCall decodes the call into) would
// drop.
func TestCallWireCarriesEveryToolCallField(t *testing.T) {
	names := func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			out = append(out, f.Name+" "+f.Tag.Get("json"))
		}
		return out
	}
	got, want := names(reflect.TypeFor[callWire]()), names(reflect.TypeFor[exthost.ToolCall]())
	if !reflect.DeepEqual(got, want) {
		t.Errorf("callWire's fields %q, exthost.ToolCall's %q", got, want)
	}
}
