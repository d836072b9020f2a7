// Package jsonindent indents compact JSON byte for byte as json.Indent does,
// but copies each string whole instead of stepping json's scanner through it
// one byte at a time. A published context is mostly long strings (skill
// bodies, descriptions), so indenting it with json.Indent cost more than
// encoding it (`loadout preview --root -o json` on 3 × 1,000 skills).
package jsonindent

import (
	"bytes"
	"encoding/json"
)

// Append appends src, compact JSON as encoding/json writes it (no
// whitespace outside strings), indented by indent per level, to dst: the
// bytes json.Indent(dst, src, "", indent) appends. src is not validated; it
// must come from encoding/json (json.Marshal, or json.Compact of valid JSON).
func Append(dst, src []byte, indent string) []byte {
	depth := 0
	// opened is a '{' or '[' just written: its newline waits for its first
	// element, so that an empty object or array stays "{}" or "[]".
	opened := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if opened && c != '}' && c != ']' {
			opened = false
			depth++
			dst = newline(dst, indent, depth)
		}
		switch c {
		case '"':
			end := stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end - 1
		case '{', '[':
			opened = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = newline(dst, indent, depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if opened {
				opened = false
			} else {
				depth--
				dst = newline(dst, indent, depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// Encode encodes v as a json.Encoder with SetEscapeHTML(false) and
// SetIndent("", indent) does, trailing newline included, to the same bytes.
func Encode(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	compact := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	out := Append(make([]byte, 0, len(compact)+len(compact)/4), compact, indent)
	return append(out, '\n'), nil
}

// stringEnd returns the index just past the closing quote of the string
// whose opening quote is src[start].
func stringEnd(src []byte, start int) int {
	i := start + 1
	for {
		j := bytes.IndexByte(src[i:], '"')
		if j < 0 {
			return len(src)
		}
		i += j
		if escaped(src, start, i) {
			i++
			continue
		}
		return i + 1
	}
}

// escaped reports whether the quote at src[at] is escaped: preceded, after
// the string's opening quote at src[start], by an odd number of backslashes.
func escaped(src []byte, start, at int) bool {
	n := 0
	for k := at - 1; k > start && src[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

func newline(dst []byte, indent string, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, indent...)
	}
	return dst
}
