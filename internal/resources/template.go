package resources

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// placeholder is the only placeholder syntax (rule R-TPL-1). Any other brace
// text ({{ name }}, {{1x}}, {name}) does not match and stays literal.
var placeholder = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// Variables returns the distinct placeholder names of body in order of first
// appearance.
func Variables(body string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, m := range placeholder.FindAllStringSubmatch(body, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// MaxRenderedBytes bounds a rendered message: one argument repeated by a
// template could otherwise make hostd build hundreds of megabytes.
const MaxRenderedBytes = 1 << 20

// RenderTemplate replaces every {{name}} of body with args[name]. A missing argument is
// a *TemplateError naming the first missing variable (R-TPL-2); extra
// arguments are ignored. Replacement values are inserted verbatim and never
// re-scanned, so an argument containing "{{x}}" stays literal. A message over
// MaxRenderedBytes is refused before it is built.
func RenderTemplate(body string, args map[string]string) (string, error) {
	for _, v := range Variables(body) {
		if _, ok := args[v]; !ok {
			return "", &TemplateError{Variable: v, Message: "missing argument"}
		}
	}
	matches := placeholder.FindAllStringSubmatchIndex(body, -1)
	size := len(body)
	for _, m := range matches {
		size += len(args[body[m[2]:m[3]]]) - (m[1] - m[0])
		if size > MaxRenderedBytes {
			return "", &TemplateError{Message: fmt.Sprintf("the rendered message would exceed %d bytes; shorten the arguments", MaxRenderedBytes)}
		}
	}
	var b strings.Builder
	b.Grow(size)
	last := 0
	for _, m := range matches {
		b.WriteString(body[last:m[0]])
		b.WriteString(args[body[m[2]:m[3]]])
		last = m[1]
	}
	b.WriteString(body[last:])
	return b.String(), nil
}

// TextContent is one text block of a message.
type TextContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// UserMessage is the canonical user message a rendered template becomes
// (rule R-TPL-3). Timestamp is in Unix milliseconds.
type UserMessage struct {
	Role      string        `json:"role"`
	Content   []TextContent `json:"content"`
	Timestamp int64         `json:"timestamp"`
}

// NewUserMessage wraps text as a user message stamped with at. Rendering takes
// the time as an argument so that it stays pure (R-TPL-4).
func NewUserMessage(text string, at time.Time) UserMessage {
	return UserMessage{
		Role:      "user",
		Content:   []TextContent{{Type: "text", Text: text}},
		Timestamp: at.UnixMilli(),
	}
}
