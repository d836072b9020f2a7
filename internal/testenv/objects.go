package testenv

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
)

// Skill is a Skill object with a description, a body and optional files.
func Skill(ns, name, description, body string, files ...v1alpha1.SkillFile) *v1alpha1.Skill {
	return &v1alpha1.Skill{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.SkillSpec{Description: v1alpha1.Description(description), Body: body, Files: files},
	}
}

// Template is a Template object with a body.
func Template(ns, name, body string) *v1alpha1.Template {
	return &v1alpha1.Template{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.TemplateSpec{Body: body}}
}
