package v1alpha1

// ToolOutput bounds what one call of a tool may answer. The size is the
// bytes of the result's content blocks (text, and the data of images and
// other blocks), as the agent would receive them.
type ToolOutput struct {
	// maxBytes is the largest answer the agent receives.
	// +required
	// +kubebuilder:validation:Minimum=256
	// +kubebuilder:validation:Maximum=1048576
	MaxBytes int32 `json:"maxBytes"`

	// onOverflow is what hostd does with a larger answer: Truncate keeps the
	// first maxBytes and adds a marker saying how much was cut and where
	// hostd keeps the whole answer for a while; Refuse answers an error
	// instead, and the tool's answer is dropped.
	// +optional
	// +kubebuilder:default=Truncate
	OnOverflow OutputOverflow `json:"onOverflow,omitempty"`
}

// OutputOverflow is what hostd does with a tool answer over its output limit.
// +kubebuilder:validation:Enum=Truncate;Refuse
type OutputOverflow string

const (
	// OutputTruncate cuts the answer at the limit and marks the cut.
	OutputTruncate OutputOverflow = "Truncate"
	// OutputRefuse answers an error naming the limit instead.
	OutputRefuse OutputOverflow = "Refuse"
)

// ExecutionMode says whether a tool's calls may run at the same time.
// +kubebuilder:validation:Enum=Parallel;Serial
type ExecutionMode string

const (
	// ExecutionParallel: calls may overlap (the default).
	ExecutionParallel ExecutionMode = "Parallel"
	// ExecutionSerial: hostd runs one call of the tool at a time, queueing
	// the others, and tells agents that schedule tools to do the same.
	ExecutionSerial ExecutionMode = "Serial"
)
