package extobject

import (
	"regexp"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/contract"
)

// deicticDescription finds a tool description that points at the tool
// instead of saying what it does ("Use this tool to…", "Call this…"). In the
// system prompt's flat list of tools the model cannot tell which tool
// "this" is (rule R-TL-1). Admission checks the same pattern on Extension
// objects (the ExtensionTool marker); a service-backed manifest never passed
// admission, so the loader checks it too.
var deicticDescription = regexp.MustCompile(`(?i)(^|[^a-z0-9_])((this|that)[ \t\n]+tool|(use|call|invoke)[ \t\n]+(this|me))([^a-z0-9_]|$)`)

// DescriptionRefusal is why a tool description is refused, or "": the
// same rule for declared tools and for tools an MCP server lists (the
// manager's discovery refuses them before they reach status).
func DescriptionRefusal(description string) string {
	if deicticDescription.MatchString(description) {
		return "must say what the tool does in its own words (Record a review note.), never 'this tool' or 'use this': in the system prompt's list of tools the model cannot tell which tool 'this' is"
	}
	return ""
}

// toolTraits is what the API says of a tool's behaviour as the registry
// publishes it.
func toolTraits(output *v1alpha1.ToolOutput, mode v1alpha1.ExecutionMode) contract.ToolTraits {
	var t contract.ToolTraits
	if output != nil {
		onOverflow := contract.OverflowTruncate
		if output.OnOverflow == v1alpha1.OutputRefuse {
			onOverflow = contract.OverflowRefuse
		}
		t.Output = &contract.ToolOutput{MaxBytes: int(output.MaxBytes), OnOverflow: onOverflow}
	}
	if mode == v1alpha1.ExecutionSerial {
		t.ExecutionMode = contract.ExecutionSerial
	}
	return t
}

// declaredTraits are a declared tool's traits, its hints included.
func declaredTraits(t *v1alpha1.ExtensionTool) contract.ToolTraits {
	tr := toolTraits(t.Output, t.ExecutionMode)
	tr.Destructive, tr.Idempotent, tr.OpenWorld = t.Destructive, t.Idempotent, t.OpenWorld
	return tr.Clone()
}

// discoveredTraits are an MCP server's tool's traits: the server's hints,
// the Extension's output limit and execution mode.
func discoveredTraits(s *v1alpha1.MCPServer, d *v1alpha1.DiscoveredTool) contract.ToolTraits {
	tr := toolTraits(s.Output, s.ExecutionMode)
	if a := d.Annotations; a != nil {
		tr.Destructive, tr.Idempotent, tr.OpenWorld = a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint
	}
	return tr.Clone()
}
