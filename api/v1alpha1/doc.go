// Package v1alpha1 contains the loadout.dev/v1alpha1 API: Skill, Template,
// Extension and Workspace.
//
// +kubebuilder:object:generate=true
// +groupName=loadout.dev
package v1alpha1
