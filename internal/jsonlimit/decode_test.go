package jsonlimit

import (
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// corpus holds texts whose decoding must match encoding/json's exactly.
var corpus = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e3`, `-2E-2`, `1e308`, `123456789012345678901234567890`,
	`"plain"`, `"caf\u00e9 ☕ 漢字"`, `"\ud83d\ude00 pair"`, `"\ud800 lone surrogate"`, "\"\xff\xfe invalid utf-8\"",
	`"esc \" \\ \/ \b \f \n \r \t"`, `{"a":{"b":[1,[2,[3,{}]],{"c":null}]},"d":[]}`,
	` { "sp" : [ 1 , 2 ] , "x" : "y" } `, `[{},{},{},[],[[]]]`,
	`{"A":1,"a":2}`, // keys differ by case: both kept
	`{"command":"ls -la","path":"/tmp/x","n":42,"flags":[true,false,null]}`,
	"{\"\xff\":1,\"k\":\"\xc3\x28\"}",
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, text := range corpus {
		var want any
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatalf("corpus %q: %v", text, err)
		}
		got, err := Decode([]byte(text))
		if err != nil {
			t.Fatalf("Decode(%q): %v", text, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(%q) = %#v, want %#v", text, got, want)
		}
		if err := CheckDuplicateKeys([]byte(text)); err != nil {
			t.Errorf("CheckDuplicateKeys(%q): %v", text, err)
		}
	}
}

func TestDecodeRefusesDuplicateKeysAtAnyDepth(t *testing.T) {
	for text, key := range map[string]string{
		`{"path":"/tmp/x","path":"/etc/passwd"}`:      "path",
		`{"a":[{"x":1,"y":2,"x":3}]}`:                 "x",
		`{"path":"/tmp/x","p\u0061th":"/etc/passwd"}`: "path", // equal once decoded
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":3}`: "k3",
		"{\"\xff\":1,\"\xfe\":2}": "\ufffd", // both decode to U+FFFD
	} {
		_, err := Decode([]byte(text))
		var dup *DuplicateKeyError
		if !errors.As(err, &dup) || dup.Key != key {
			t.Errorf("Decode(%q) = %v, want a duplicate %q", text, err, key)
		}
		err = CheckDuplicateKeys([]byte(text))
		if !errors.As(err, &dup) || dup.Key != key {
			t.Errorf("CheckDuplicateKeys(%q) = %v, want a duplicate %q", text, err, key)
		}
	}
	// Nesting past encoding/json's bound is not walked (its decoder refuses
	// it), so a body of brackets cannot grow the stack.
	deep := []byte(strings.Repeat(`{"a":[`, 200_000))
	if err := CheckDuplicateKeys(deep); err != nil {
		t.Errorf("deep nesting: %v", err)
	}
	// The same key in sibling objects is no duplicate.
	if err := CheckDuplicateKeys([]byte(`[{"a":1},{"a":2},{"b":{"a":3}}]`)); err != nil {
		t.Errorf("sibling objects: %v", err)
	}
}

func TestDecodeRefusesWhatEncodingJSONRefuses(t *testing.T) {
	for _, text := range []string{``, `{`, `[1,]`, `{"a" 1}`, `01`, `"unterminated`, `{} {}`, `1e999`, `[-1e400]`, "\"ctl\x01\"", strings.Repeat("[", 10001) + strings.Repeat("]", 10001)} {
		var want any
		if json.Unmarshal([]byte(text), &want) == nil {
			t.Fatalf("encoding/json accepts %q", text)
		}
		if got, err := Decode([]byte(text)); err == nil {
			t.Errorf("Decode(%q) = %#v, want an error", text, got)
		}
	}
}

func TestObjectField(t *testing.T) {
	var v struct {
		Args Object `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(`{"arguments":{"l":[{},{"x":"y"}]}}`), &v); err != nil {
		t.Fatal(err)
	}
	if want := (Object{"l": []any{map[string]any{}, map[string]any{"x": "y"}}}); !reflect.DeepEqual(v.Args, want) {
		t.Errorf("got %#v, want %#v", v.Args, want)
	}
	v.Args = nil
	if err := json.Unmarshal([]byte(`{"arguments":null}`), &v); err != nil || v.Args != nil {
		t.Errorf("null: %#v, %v", v.Args, err)
	}
	for _, text := range []string{`{"arguments":[1]}`, `{"arguments":"s"}`, `{"arguments":{"a":1,"a":2}}`} {
		if err := json.Unmarshal([]byte(text), &v); err == nil {
			t.Errorf("%s: want an error", text)
		}
	}
}

// TestDecodeLeavesLessGarbage proves why the package exists: a list of
// 100,000 empty objects (the costliest call hostd accepts) allocates at
// most three quarters of what encoding/json allocates for it.
func TestDecodeLeavesLessGarbage(t *testing.T) {
	text := []byte("[" + strings.Repeat("{},", 99_999) + "{}]")
	stdBytes := allocated(func() {
		var v any
		_ = json.Unmarshal(text, &v)
	})
	ours := allocated(func() { _, _ = Decode(text) })
	if ours > stdBytes*3/4 {
		t.Errorf("Decode allocated %d bytes, encoding/json %d: want at most 3/4", ours, stdBytes)
	}
	t.Logf("Decode %d bytes, encoding/json %d", ours, stdBytes)
}

func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, text := range corpus {
		f.Add([]byte(text))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		var want any
		wantErr := json.Unmarshal(text, &want)
		dupErr := CheckDuplicateKeys(text)
		got, err := Decode(text)
		switch {
		case wantErr != nil && err == nil:
			t.Fatalf("Decode(%q) accepted what encoding/json refused: %v", text, wantErr)
		case wantErr == nil && err == nil:
			if dupErr != nil {
				t.Fatalf("CheckDuplicateKeys(%q) = %v but Decode accepted it", text, dupErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Decode(%q) = %#v, want %#v", text, got, want)
			}
		case wantErr == nil && err != nil:
			// Only a duplicate key may make Decode refuse valid JSON, and
			// the check without building must agree.
			var dup *DuplicateKeyError
			if !errors.As(err, &dup) || !errors.As(dupErr, &dup) {
				t.Fatalf("Decode(%q) = %v, CheckDuplicateKeys %v; encoding/json accepted it", text, err, dupErr)
			}
		}
	})
}

func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
