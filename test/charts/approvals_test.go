package charts

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// approvals.namespaces binds loadout-hostd-approvals (create, get, watch on
// Approvals, create Events, nothing else) in each namespace to its own ServiceAccounts;
// approvals.approverGroups binds loadout-approver cluster-wide to them.
func TestCharts_ApprovalsValuesBindTheRoles(t *testing.T) {
	objs := render(t, "loadout", "--set", "image.tag=dev", "--set", "approvals.namespaces={team-a,team-b}",
		"--set", "approvals.approverGroups={platform:approvers}")
	role := find(objs, "ClusterRole", "loadout-hostd-approvals")
	if role == nil {
		t.Fatal("no ClusterRole loadout-hostd-approvals")
	}
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	if len(rules) != 2 {
		t.Fatalf("loadout-hostd-approvals rules = %v", rules)
	}
	// The second: Events of hook failures on its Workspace, created only.
	evVerbs, _, _ := unstructured.NestedStringSlice(rules[1].(map[string]any), "verbs")
	evResources, _, _ := unstructured.NestedStringSlice(rules[1].(map[string]any), "resources")
	if len(evVerbs) != 1 || evVerbs[0] != "create" || len(evResources) != 1 || evResources[0] != "events" {
		t.Errorf("loadout-hostd-approvals: %v on %v, want exactly create on events", evVerbs, evResources)
	}
	verbs, _, _ := unstructured.NestedStringSlice(rules[0].(map[string]any), "verbs")
	resources, _, _ := unstructured.NestedStringSlice(rules[0].(map[string]any), "resources")
	if len(verbs) != 3 || verbs[0] != "create" || verbs[1] != "get" || verbs[2] != "watch" || len(resources) != 1 || resources[0] != "approvals" {
		t.Errorf("loadout-hostd-approvals: %v on %v, want exactly create, get, watch on approvals", verbs, resources)
	}
	bindings := 0
	for _, o := range objs {
		if o.GetKind() != "RoleBinding" || o.GetName() != "loadout-hostd-approvals" {
			continue
		}
		bindings++
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		if len(subjects) != 1 || subjects[0].(map[string]any)["name"] != "system:serviceaccounts:"+o.GetNamespace() {
			t.Errorf("RoleBinding %s/%s subjects = %v, want the namespace's ServiceAccounts only", o.GetNamespace(), o.GetName(), subjects)
		}
	}
	if bindings != 2 {
		t.Errorf("%d RoleBindings loadout-hostd-approvals, want one in each of team-a and team-b", bindings)
	}
	crb := find(objs, "ClusterRoleBinding", "loadout-approver")
	if crb == nil {
		t.Fatal("no ClusterRoleBinding loadout-approver")
	}
	if subjects, _, _ := unstructured.NestedSlice(crb.Object, "subjects"); len(subjects) != 1 || subjects[0].(map[string]any)["name"] != "platform:approvers" {
		t.Errorf("loadout-approver subjects = %v", subjects)
	}
	if find(render(t, "loadout", "--set", "image.tag=dev"), "ClusterRoleBinding", "loadout-approver") != nil {
		t.Error("without approvers, the chart binds loadout-approver to nobody: it must not render the binding")
	}
}
