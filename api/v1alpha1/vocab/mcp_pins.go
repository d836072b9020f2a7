package vocab

// ConditionToolsPinned reports, on an Extension whose spec.mcpServer.tools
// has pins, whether every pinned tool the server offers still matches its
// pin. Reasons: ReasonPinsMatch, ReasonPinDrift.
const ConditionToolsPinned ConditionType = "ToolsPinned"

// Reasons of ConditionToolsPinned (and of the Warning Event of a drift).
const (
	// ReasonPinsMatch: every pinned tool discovered matches its pin.
	ReasonPinsMatch ConditionReason = "PinsMatch"
	// ReasonPinDrift: a pinned tool's definition changed on the server; the
	// change is refused (onDrift says whether the last matching definition
	// stays or the tool is dropped) and the message names the tool and
	// the difference.
	ReasonPinDrift ConditionReason = "PinDrift"
)
