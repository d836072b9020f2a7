// Decoding untrusted JSON into the Go values encoding/json gives an `any`
// (map[string]any, []any, string, float64, bool, nil), at less cost, and
// refusing an object that names a key twice.
//
// hostd decodes every tool call's arguments this way (docs/benchmarks.md,
// "hostd under 32 concurrent maximal requests"). encoding/json grows each
// array by appending, so a list of 100,000 values leaves about five times
// its final size as garbage (8 MiB for the costliest call hostd accepts),
// and hostd's duplicate-key check through json.Decoder's tokens copied the
// body again. Here one scratch stack, sized once from the count of values,
// holds an array's elements until it closes and the array is allocated at
// its final length; the duplicate check walks the bytes without building
// anything. The values are the same ones encoding/json produces: CEL hooks,
// JSON Schema validation and rewriting see no difference (tests compare
// both on a corpus and under fuzzing).

package jsonlimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// ErrInvalid is a text that is not one JSON value.
var ErrInvalid = errors.New("invalid JSON")

// DuplicateKeyError is an object that names a key twice. encoding/json keeps
// the last value, while a hook or the agent's own parser may read the first:
// {"path":"/tmp/x","path":"/etc/passwd"} must not mean one thing to the
// policy and another to the tool.
type DuplicateKeyError struct{ Key string }

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("duplicate key %q in a JSON object", e.Key)
}

// Decode decodes one JSON value as json.Unmarshal into an `any` would, and
// refuses duplicate keys at any depth.
func Decode(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, ErrInvalid
	}
	return decodeValid(data)
}

// decodeValid decodes a text known to be valid JSON.
func decodeValid(data []byte) (any, error) {
	p := parser{data: data, build: true}
	// An array's elements wait on the stack until it closes; at most every
	// value of the text is waiting at once, so the stack never grows.
	p.stack = make([]any, 0, CountValues(data))
	return p.value()
}

// CheckDuplicateKeys reports the first object in data that names a key
// twice, at any depth, building nothing. Keys compare as decoded ("a" and
// "\u0061" are one key). A text that is not valid JSON may get nil or a
// duplicate found before the fault: its decoder reports it. It does not
// validate first (that is the decoder's pass), so it costs one walk.
func CheckDuplicateKeys(data []byte) error {
	p := parser{data: data}
	if _, err := p.value(); !errors.Is(err, ErrInvalid) {
		return err
	}
	return nil
}

// Object is a JSON object field decoded by Decode: a struct decoded by
// encoding/json gets its object fields this way by declaring them Object.
// A null leaves it nil; any other value than an object is an error.
type Object map[string]any

var objectType = reflect.TypeFor[map[string]any]()

// UnmarshalJSON decodes an object as Decode does. encoding/json validated
// the whole text before it calls an UnmarshalJSON, so it is not validated
// twice.
func (o *Object) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	v, err := decodeValid(data)
	if err != nil {
		return err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return &json.UnmarshalTypeError{Value: kind(v), Type: objectType}
	}
	*o = m
	return nil
}

// kind names a decoded value's JSON type as encoding/json's errors do.
func kind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	default:
		return "null"
	}
}

// parser walks a text json.Valid accepted, so it checks syntax only as far
// as it must to stay in bounds (ErrInvalid), never in full. With build it
// returns the values; without, it only looks for duplicate keys.
type parser struct {
	data  []byte
	i     int
	build bool
	stack []any    // elements of the arrays being decoded
	keys  [][]byte // keys of the objects being checked (not building)
	depth int
}

// maxDepth is encoding/json's bound on nesting: deeper is invalid there, and
// here it bounds the recursion (and so the stack) on a text nobody
// validated first.
const maxDepth = 10000

func (p *parser) ws() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek is the byte at p.i, or 0 past the end.
func (p *parser) peek() byte {
	if p.i < len(p.data) {
		return p.data[p.i]
	}
	return 0
}

// literal reads word (true, false, null) at p.i.
func (p *parser) literal(word string, v any) (any, error) {
	if !bytes.HasPrefix(p.data[p.i:], []byte(word)) {
		return nil, ErrInvalid
	}
	p.i += len(word)
	return v, nil
}

func (p *parser) value() (any, error) {
	if p.depth++; p.depth > maxDepth {
		return nil, ErrInvalid
	}
	defer func() { p.depth-- }()
	p.ws()
	switch c := p.peek(); c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		raw, escaped, ok := p.str()
		if !ok {
			return nil, ErrInvalid
		}
		if !p.build {
			return nil, nil
		}
		return unquote(raw, escaped)
	case 't':
		return p.literal("true", true)
	case 'f':
		return p.literal("false", false)
	case 'n':
		return p.literal("null", nil)
	default:
		start := p.i
		for p.i < len(p.data) && isNumberByte(p.data[p.i]) {
			p.i++
		}
		if p.i == start {
			return nil, ErrInvalid
		}
		if !p.build {
			return nil, nil
		}
		// encoding/json decodes a number into an any as a float64 and
		// refuses one that does not fit.
		s := string(p.data[start:p.i])
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, &json.UnmarshalTypeError{Value: "number " + s, Type: reflect.TypeFor[float64](), Offset: int64(start)}
		}
		return f, nil
	}
}

func isNumberByte(c byte) bool {
	return c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || ('0' <= c && c <= '9')
}

// str reads a string at p.i and returns its bytes between the quotes and
// whether it holds an escape; not ok when the text ends inside it.
func (p *parser) str() (raw []byte, escaped, ok bool) {
	p.i++ // the opening quote
	start := p.i
	// Most strings hold no escape: find the closing quote at memchr speed.
	if end := bytes.IndexByte(p.data[start:], '"'); end >= 0 && bytes.IndexByte(p.data[start:start+end], '\\') < 0 {
		p.i = start + end + 1
		return p.data[start : start+end], false, true
	}
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case '\\':
			escaped = true
			p.i += 2
		case '"':
			raw = p.data[start:p.i]
			p.i++
			return raw, escaped, true
		default:
			p.i++
		}
	}
	return nil, false, false
}

// unquote is a string's value. Without escapes and in valid UTF-8 (the
// common case) it is its bytes; otherwise encoding/json decodes it, so
// escapes, surrogates and invalid bytes (U+FFFD) come out exactly as there.
func unquote(raw []byte, escaped bool) (string, error) {
	if !escaped && utf8.Valid(raw) {
		return string(raw), nil
	}
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var s string
	err := json.Unmarshal(quoted, &s)
	return s, err
}

func (p *parser) array() (any, error) {
	p.i++ // [
	base := len(p.stack)
	p.ws()
	if p.peek() == ']' {
		p.i++
		if !p.build {
			return nil, nil
		}
		return []any{}, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if p.build {
			p.stack = append(p.stack, v)
		}
		p.ws()
		c := p.peek()
		p.i++
		if c == ']' {
			break
		}
		if c != ',' {
			return nil, ErrInvalid
		}
	}
	if !p.build {
		return nil, nil
	}
	out := make([]any, len(p.stack)-base)
	copy(out, p.stack[base:])
	clear(p.stack[base:]) // the stack must not keep the values alive
	p.stack = p.stack[:base]
	return out, nil
}

// smallObject is how many keys an object may have before the duplicate
// check (not building) keeps them in a map instead of comparing each.
const smallObject = 16

func (p *parser) object() (any, error) {
	p.i++ // {
	var m map[string]any
	if p.build {
		// encoding/json makes an empty map for {}, not nil.
		m = make(map[string]any)
	}
	base := len(p.keys)
	var many map[string]struct{}
	defer func() { p.keys = p.keys[:base] }()
	p.ws()
	if p.peek() == '}' {
		p.i++
		return m, nil
	}
	for {
		p.ws()
		if p.peek() != '"' {
			return nil, ErrInvalid
		}
		raw, escaped, ok := p.str()
		if !ok {
			return nil, ErrInvalid
		}
		var key string
		if p.build || escaped || !utf8.Valid(raw) {
			k, err := unquote(raw, escaped)
			if err != nil {
				return nil, err
			}
			key, raw = k, []byte(k)
		}
		if p.build {
			if _, dup := m[key]; dup {
				return nil, &DuplicateKeyError{Key: key}
			}
		} else if dup := p.seen(base, &many, raw); dup {
			return nil, &DuplicateKeyError{Key: string(raw)}
		}
		p.ws()
		if p.peek() != ':' {
			return nil, ErrInvalid
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if p.build {
			m[key] = v
		}
		p.ws()
		c := p.peek()
		p.i++
		if c == '}' {
			return m, nil
		}
		if c != ',' {
			return nil, ErrInvalid
		}
	}
}

// seen reports whether the object whose keys start at base named key
// before, and adds it. Most objects are small: their keys are compared on
// the shared stack, and only an object with many keys gets a map.
func (p *parser) seen(base int, many *map[string]struct{}, key []byte) bool {
	if *many != nil {
		if _, dup := (*many)[string(key)]; dup {
			return true
		}
		(*many)[string(key)] = struct{}{}
		return false
	}
	for _, k := range p.keys[base:] {
		if bytes.Equal(k, key) {
			return true
		}
	}
	p.keys = append(p.keys, key)
	if len(p.keys)-base > smallObject {
		*many = make(map[string]struct{}, 2*smallObject)
		for _, k := range p.keys[base:] {
			(*many)[string(k)] = struct{}{}
		}
	}
	return false
}
