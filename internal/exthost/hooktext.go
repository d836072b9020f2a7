package exthost

import "strings"

// HookText is one piece of text a hook added for the model (a `context`
// outcome at SessionStart, UserInput, BeforeAgentStart or
// BeforeModelRequest) and where it came from.
type HookText struct {
	Extension, Hook string
	// Platform: the hook is imposed, so the text is the platform's.
	Platform bool
	// Namespace is the hook's extension's namespace, the label of a
	// tenant's text.
	Namespace string
	Text      string
}

// Headings of hook text (docs/hooks.md, "Where hook text comes from").
const (
	// PlatformHookTextHeading opens the platform's hook text.
	PlatformHookTextHeading = "# Organisation policy (from the platform's Loadout hooks)"
	// tenantHookTextHeading opens a tenant's hook text; %s is its origin.
	tenantHookTextPrefix = "# Project content from "
	tenantHookTextSuffix = " (added by a Loadout hook; not organisation policy)"
)

// TenantHookTextHeading is the heading of hook text from namespace ns.
func TenantHookTextHeading(ns string) string {
	return tenantHookTextPrefix + "namespace " + ns + tenantHookTextSuffix
}

func (t HookText) heading() string {
	switch {
	case t.Platform:
		return PlatformHookTextHeading
	case t.Namespace != "":
		return TenantHookTextHeading(t.Namespace)
	default:
		return tenantHookTextPrefix + "extension " + t.Extension + tenantHookTextSuffix
	}
}

// RenderHookText is the text hooks added, as every agent gives it to the
// model: in hook order (the tenants' first, the platform's last), each run
// of texts from one origin under one heading naming it, texts joined by a
// blank line. A tenant's text is quoted ("> " on every line), so nothing it
// says can close its section or open one that reads as the platform's; the
// platform's text stands as written, never under a tenant's heading.
func RenderHookText(texts []HookText) string {
	var b strings.Builder
	last := ""
	for _, t := range texts {
		if h := t.heading(); h != last {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(h)
			last = h
		}
		b.WriteString("\n\n")
		if t.Platform {
			b.WriteString(t.Text)
			continue
		}
		quote(&b, t.Text)
	}
	return b.String()
}

// quote writes text as a Markdown block quote.
func quote(b *strings.Builder, text string) {
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(">")
		if line != "" {
			b.WriteString(" ")
			b.WriteString(line)
		}
	}
}
