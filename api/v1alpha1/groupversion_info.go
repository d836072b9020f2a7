package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every object in this package.
	GroupVersion = schema.GroupVersion{Group: "loadout.dev", Version: "v1alpha1"}

	// schemeBuilder collects the functions that register this package's types.
	// It is built from apimachinery alone so that the API package does not depend
	// on controller-runtime.
	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&Skill{}, &SkillList{},
		&Template{}, &TemplateList{},
		&Extension{}, &ExtensionList{},
		&Workspace{}, &WorkspaceList{},
		&Approval{}, &ApprovalList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
