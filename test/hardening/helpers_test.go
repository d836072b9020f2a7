package hardening

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

// devWorkspace reads its own namespace, then the platform namespace.
func devWorkspace(ns string) *v1alpha1.Workspace {
	return &v1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"},
		Spec: v1alpha1.WorkspaceSpec{Roots: []v1alpha1.WorkspaceRoot{
			{Name: "project"}, {Name: "platform", Namespace: platformNS},
		}},
	}
}

// publishedNotes is a fresh namespace of trust holding the notes skill and
// devWorkspace, once the Workspace has published its context.
func publishedNotes(t *testing.T, trust vocab.TrustLevel) (string, *v1alpha1.Workspace, *corev1.ConfigMap) {
	t.Helper()
	ns := kit.NewNamespace(t, trust)
	kit.Create(t, testenv.Skill(ns, "notes", "Notes.", "NOTES BODY"))
	kit.Create(t, devWorkspace(ns))
	ws, cm := kit.Published(t, ns, "dev", "Notes.")
	return ns, ws, cm
}

func tool(name string) v1alpha1.ExtensionTool {
	return v1alpha1.ExtensionTool{Name: v1alpha1.ToolName(name), Description: "Tool " + v1alpha1.Description(name) + "."}
}

// allData joins a ConfigMap's data for leak checks.
func allData(cm *corev1.ConfigMap) string {
	var b strings.Builder
	for k, v := range cm.Data {
		b.WriteString(k + "\n" + v + "\n")
	}
	return b.String()
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// installPolicy creates the admission policies (validating and mutating) and
// bindings of one file of config/policy (once per suite: an existing one is
// kept). Admission policies take effect asynchronously: probe with a dry run
// before relying on one (waitEnforced). It returns the file's objects, for a
// test whose policy must not outlive it.
func installPolicy(t *testing.T, file string) []client.Object {
	t.Helper()
	path := filepath.Join(testenv.RepoRoot(), "config", "policy", file)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLReader(bufioReader(raw))
	var installed []client.Object
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return installed
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var tm metav1.TypeMeta
		if yaml.Unmarshal(doc, &tm) != nil {
			continue
		}
		var obj client.Object
		switch tm.Kind {
		case "ValidatingAdmissionPolicy":
			obj = &admissionregistrationv1.ValidatingAdmissionPolicy{}
		case "ValidatingAdmissionPolicyBinding":
			obj = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		case "MutatingAdmissionPolicy":
			obj = &admissionregistrationv1.MutatingAdmissionPolicy{}
		case "MutatingAdmissionPolicyBinding":
			obj = &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
		default:
			continue
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := k8sClient.Create(context.Background(), obj); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("installing %s %s: %v", tm.Kind, obj.GetName(), err)
		}
		installed = append(installed, obj)
	}
}

// waitEnforced retries a dry-run write until admission refuses it.
func waitEnforced(t *testing.T, what string, dryRun func() error) {
	t.Helper()
	kit.Eventually(t, func() error {
		err := dryRun()
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			return nil
		}
		return errString(what + " is not enforced yet: " + errText(err))
	})
}

// impersonate returns a direct client acting as user in groups.
func impersonate(t *testing.T, user string, groups ...string) client.Client {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	cl, err := client.New(c, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// grant gives user the rules cluster-wide, through a ClusterRole and a
// ClusterRoleBinding named after it.
func grant(t *testing.T, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: user}}}
	for _, o := range []client.Object{role, binding} {
		kit.Create(t, o)
		deleteWhenDone(t, o)
	}
	waitAuthorized(t, user, "", rules[0])
}

// waitAuthorized waits until the API server's authorizer lets user do what
// rule grants in ns ("" for cluster scope), asked with a
// SubjectAccessReview: a new binding reaches the authorizer's cache a
// moment after it is created, and a request in between is refused by RBAC
// ("clusterrole not found"), not by the policy a test means to prove.
func waitAuthorized(t *testing.T, user, ns string, rule rbacv1.PolicyRule) {
	t.Helper()
	concrete := func(values []string, wildcard string) string {
		if len(values) == 0 || values[0] == "*" {
			return wildcard
		}
		return values[0]
	}
	resource, subresource, _ := strings.Cut(concrete(rule.Resources, "configmaps"), "/")
	attrs := &authorizationv1.ResourceAttributes{Namespace: ns, Verb: concrete(rule.Verbs, "get"),
		Group: concrete(rule.APIGroups, ""), Resource: resource, Subresource: subresource}
	switch {
	case len(rule.ResourceNames) > 0:
		attrs.Name = rule.ResourceNames[0]
	case resource == "namespaces" && ns != "":
		attrs.Name = ns // a Role grants its own Namespace object only
	}
	testenv.WaitAuthorized(t, k8sClient, user, nil, *attrs)
}

// deleteWhenDone deletes a cluster-scoped object when the test ends, so
// another run in this API server (go test -count=N) finds its name free.
func deleteWhenDone(t *testing.T, o client.Object) {
	t.Helper()
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), o) })
}

// grantInNamespace gives user the rules in ns only, through a Role and a
// RoleBinding named after it: a tenant with rights in its own namespace.
func grantInNamespace(t *testing.T, ns, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	kit.Create(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user}, Rules: rules})
	kit.Create(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: user}}})
	waitAuthorized(t, user, ns, rules[0])
}

// mustBeDenied fails unless err is admission's refusal naming the wants.
var mustBeDenied = testenv.MustBeRefusedByAdmission
