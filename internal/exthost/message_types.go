package exthost

import (
	"fmt"
	"regexp"
	"strings"
)

// MessageTypeDecl declares a custom message type: whether messages of the
// type enter the model's context and, when they do, how they read to it.
type MessageTypeDecl struct {
	Type      string
	InContext bool
	// Template is the text the model reads for a message of the type, with
	// {{content}} where the message's content goes; empty means the content
	// as it is.
	Template string
}

// MaxMessageTemplateBytes bounds a message type's template.
const MaxMessageTemplateBytes = 4096

const messageContentPlaceholder = "{{content}}"

var templatePlaceholder = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// CheckMessageTemplate refuses a template that is too long, names a
// placeholder other than {{content}}, or drops the content altogether.
func CheckMessageTemplate(t string) error {
	if t == "" {
		return nil
	}
	if len(t) > MaxMessageTemplateBytes {
		return fmt.Errorf("template is %d bytes, more than the limit of %d", len(t), MaxMessageTemplateBytes)
	}
	for _, m := range templatePlaceholder.FindAllStringSubmatch(t, -1) {
		if m[1] != "content" {
			return fmt.Errorf("template names {{%s}}; the only placeholder is %s", m[1], messageContentPlaceholder)
		}
	}
	if !strings.Contains(t, messageContentPlaceholder) {
		return fmt.Errorf("template must contain %s, where the message's content goes", messageContentPlaceholder)
	}
	return nil
}

// RenderMessage is what the model reads for a message of a type with
// template t: content in place of every {{content}}, in one pass, so content
// that itself holds {{content}} is never expanded again.
func RenderMessage(t, content string) string {
	if t == "" {
		return content
	}
	return strings.ReplaceAll(t, messageContentPlaceholder, content)
}
