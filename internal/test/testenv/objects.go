package testenv

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
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

// CELHook is a CEL hook on event with a five-second timeout; its message
// names it, so a test can tell which hook denied.
func CELHook(name string, event vocab.HookEvent, expr string) v1alpha1.ExtensionHook {
	return v1alpha1.ExtensionHook{Name: name, Event: event, TimeoutSeconds: 5, CEL: &v1alpha1.CELHook{Expression: expr, Message: "denied by " + name}}
}

// Extension is an Extension object with tools and hooks.
func Extension(ns, name string, tools []v1alpha1.ExtensionTool, hooks ...v1alpha1.ExtensionHook) *v1alpha1.Extension {
	return &v1alpha1.Extension{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ExtensionSpec{Tools: tools, Hooks: hooks}}
}

// LengthGuard is an Extension whose BeforeToolCall hook "length" blocks,
// with "command too long", a command longer than the maxCommand of its
// params, read from the ConfigMap length-guard: one expression whose
// verdict each namespace's params decide.
func LengthGuard(ns, name string) *v1alpha1.Extension {
	e := Extension(ns, name, nil, v1alpha1.ExtensionHook{Name: "length", Event: vocab.BeforeToolCall,
		CEL: &v1alpha1.CELHook{Expression: "call.arguments.command.size() <= int(params.maxCommand)", Message: "command too long"}})
	e.Spec.ParamRef = &v1alpha1.ParamRef{Name: "length-guard"}
	return e
}
