package mcppin

import (
	"fmt"
	"strings"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// Drift is one pinned tool whose discovered definition is not its pin.
type Drift struct {
	// Tool is the server's name of the tool.
	Tool string
	// Pinned and Found are the pin's digest and the discovered one.
	Pinned, Found string
	// Diff is the difference from the last definition that matched the
	// pin (empty when none was ever served).
	Diff []string
	// Kept: the last matching definition stays served; otherwise the tool
	// is not served.
	Kept bool
}

// String is the drift as a condition or an Event says it.
func (d Drift) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tool %q changed on the server (digest %s, pinned %s)", d.Tool, short(d.Found), short(d.Pinned))
	if d.Kept {
		b.WriteString("; the pinned definition stays served")
	} else {
		b.WriteString("; the tool is not served")
	}
	if len(d.Diff) > 0 {
		b.WriteString("; changed: ")
		b.WriteString(strings.Join(d.Diff, "; "))
	} else {
		b.WriteString("; no definition matching the pin was discovered before, so no difference can be shown")
	}
	return b.String()
}

func short(digest string) string {
	if len(digest) > len("sha256:")+12 {
		return digest[:len("sha256:")+12]
	}
	return digest
}

// Apply decides which of a fresh discovery's tools are served. A tool
// without a pin is served as found. A pinned tool whose found digest
// equals its pin is served as found; otherwise the change is refused:
// under KeepPinned the last served definition stays if it matches the pin
// (last is the status before this discovery, the last good list), under
// BlockTool, or with no matching definition to keep, the tool is dropped.
// Every refusal is a Drift. found and last carry their digests
// (FromClient); out keeps found's order.
func Apply(found, last []v1alpha1.DiscoveredTool, sel v1alpha1.MCPToolSelection) (out []v1alpha1.DiscoveredTool, drifts []Drift) {
	pins := make(map[string]string, len(sel.Pins))
	for _, p := range sel.Pins {
		pins[p.Name] = p.Digest
	}
	for _, t := range found {
		pin, pinned := pins[t.ServerName]
		if !pinned || t.Digest == pin {
			out = append(out, t)
			continue
		}
		d := Drift{Tool: t.ServerName, Pinned: pin, Found: t.Digest}
		if prev := matching(last, t.ServerName, pin); prev != nil {
			if was, err := DefinitionOf(prev); err == nil {
				if now, err := DefinitionOf(&t); err == nil {
					d.Diff = Diff(was, now)
				}
			}
			if sel.OnDrift != v1alpha1.DriftBlockTool {
				kept := *prev
				kept.Name = v1alpha1.ToolName(sel.Prefix + prev.ServerName) // the prefix may have changed since
				out = append(out, kept)
				d.Kept = true
			}
		}
		drifts = append(drifts, d)
	}
	return out, drifts
}

// matching is last's definition of tool if it matches pin, recomputed:
// the status is input, whoever wrote it.
func matching(last []v1alpha1.DiscoveredTool, tool, pin string) *v1alpha1.DiscoveredTool {
	for i := range last {
		if last[i].ServerName != tool {
			continue
		}
		if digest, err := DigestOf(&last[i]); err == nil && digest == pin {
			return &last[i]
		}
	}
	return nil
}

// Served says whether a tool of the Extension's status may be served
// under sel's pins: unpinned, or its recomputed digest is its pin. The
// loader checks it again, so a status written before the pins changed
// (or by anyone else) never serves a definition nobody reviewed.
func Served(t *v1alpha1.DiscoveredTool, sel v1alpha1.MCPToolSelection) error {
	for _, p := range sel.Pins {
		if p.Name != t.ServerName {
			continue
		}
		digest, err := DigestOf(t)
		if err != nil {
			return err
		}
		if digest != p.Digest {
			return fmt.Errorf("tool %q: definition %s is not its pin %s", t.ServerName, short(digest), short(p.Digest))
		}
	}
	return nil
}
