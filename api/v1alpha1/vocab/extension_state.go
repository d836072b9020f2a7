package vocab

// ExtensionLoadState is what became of an extension for one Workspace.
// +kubebuilder:validation:Enum=Loaded;SkippedUntrusted;Rejected
type ExtensionLoadState string

const (
	// ExtensionLoaded: the extension's tools and hooks are registered.
	ExtensionLoaded ExtensionLoadState = "Loaded"
	// ExtensionSkippedUntrusted: the namespace is not trusted for extensions;
	// nothing of the extension was read or contacted.
	ExtensionSkippedUntrusted ExtensionLoadState = "SkippedUntrusted"
	// ExtensionRejected: loading failed and nothing of it was registered.
	ExtensionRejected ExtensionLoadState = "Rejected"
)
