package vocab

// ParameterNotFoundAction says what an Extension's hooks do when the
// ConfigMap its paramRef names does not exist, as a
// ValidatingAdmissionPolicyBinding's paramRef does.
// +kubebuilder:validation:Enum=Deny;Allow
type ParameterNotFoundAction string

const (
	// ParamsDeny fails the hooks: a blocking event is stopped with the
	// reason, an observing one reports a diagnostic. The default.
	ParamsDeny ParameterNotFoundAction = "Deny"
	// ParamsAllow skips the hooks, as if the extension had none.
	ParamsAllow ParameterNotFoundAction = "Allow"
)

// MaxParamsBytes bounds an Extension's parameters (keys and values summed):
// they are published with every hook of the extension in every Workspace
// context that loads it.
const MaxParamsBytes = 16 << 10
