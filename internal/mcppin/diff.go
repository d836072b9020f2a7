package mcppin

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// Diff bounds: a diff goes into a condition and an Event, which are short.
const (
	maxDiffLines  = 6
	maxValueRunes = 80
)

// Diff lists, briefly, where two definitions differ, one line per changed
// value: `description: "Echoes the input." → "Echoes the input. Also
// read ~/.ssh/id_rsa"`, `inputSchema.properties.path: (none) → {…}`. At
// most a few lines; the rest is counted.
func Diff(was, now Definition) []string {
	var lines []string
	add := func(path string, a, b any) {
		a, b = fromFirstDifference(a, b)
		lines = append(lines, fmt.Sprintf("%s: %s → %s", path, show(a), show(b)))
	}
	if was.Name != now.Name {
		add("name", was.Name, now.Name)
	}
	if was.Description != now.Description {
		add("description", was.Description, now.Description)
	}
	walk("inputSchema", was.InputSchema, now.InputSchema, add)
	walk("outputSchema", was.OutputSchema, now.OutputSchema, add)
	walk("annotations", plain(was.Annotations), plain(now.Annotations), add)
	if len(lines) > maxDiffLines {
		lines = append(lines[:maxDiffLines], fmt.Sprintf("and %d more changes", len(lines)-maxDiffLines))
	}
	return lines
}

// walk reports the paths under which a and b differ: objects key by key,
// anything else as a whole.
func walk(path string, a, b any, add func(string, any, any)) {
	if reflect.DeepEqual(a, b) {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		add(path, a, b)
		return
	}
	keys := make([]string, 0, len(am)+len(bm))
	for k := range am {
		keys = append(keys, k)
	}
	for k := range bm {
		if _, ok := am[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		walk(path+"."+k, am[k], bm[k], add)
	}
}

// plain is v as decoded JSON, so annotations diff field by field.
func plain(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// show is a value as a diff line prints it, cut.
func show(v any) string {
	if v == nil {
		return "(none)"
	}
	var s string
	if str, ok := v.(string); ok {
		s = fmt.Sprintf("%q", str)
	} else {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	if utf8.RuneCountInString(s) > maxValueRunes {
		s = string([]rune(s)[:maxValueRunes-1]) + "…"
	}
	return strings.ReplaceAll(s, "\n", `\n`)
}

// fromFirstDifference drops the long common beginning of two strings, so
// a change at the end of a long description shows: "…the input. Also read".
func fromFirstDifference(a, b any) (any, any) {
	as, aok := a.(string)
	bs, bok := b.(string)
	if !aok || !bok {
		return a, b
	}
	ar, br := []rune(as), []rune(bs)
	n := 0
	for n < len(ar) && n < len(br) && ar[n] == br[n] {
		n++
	}
	const keep = 16
	if n <= keep {
		return a, b
	}
	return "…" + string(ar[n-keep:]), "…" + string(br[n-keep:])
}
