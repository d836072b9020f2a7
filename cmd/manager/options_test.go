package main

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/internal/kubescheme"
)

// Started outside a pod with --leader-elect and no
// --leader-election-namespace, the manager elects in its own namespace
// (--namespace), as docs/operations.md says; controller-runtime alone would
// refuse to start there.
func TestManagerOptions_LeaderElectionDefaultsToTheManagersNamespace(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--leader-elect", "--namespace", "platform-a"}, "platform-a"},
		{[]string{"--leader-elect", "--namespace", "platform-a", "--leader-election-namespace", "leases"}, "leases"},
	} {
		o, _, err := parseFlags(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.managerOptions(kubescheme.New()).LeaderElectionNamespace; got != tc.want {
			t.Errorf("%v: lease namespace %q, want %q", tc.args, got, tc.want)
		}
	}
}

// --claude-code-base-url takes only a gateway that keeps Claude Code off
// the first-party API, whose sessions fetch their organisation's
// server-managed settings (docs/security.md): Anthropic's host, in any
// spelling, is refused at start with the reason, as are a URL without a
// host, another scheme and one carrying credentials.
func TestManagerOptions_ClaudeCodeBaseURLMustNameTheGateway(t *testing.T) {
	for _, ok := range []string{"https://llm-gateway.platform.svc:8443", "http://10.0.0.7:4000/anthropic"} {
		o, _, err := parseFlags([]string{"--claude-code-base-url", ok})
		if err != nil || o.claudeCodeBaseURL != ok {
			t.Errorf("--claude-code-base-url %s: %+v, %v", ok, o, err)
		}
	}
	for bad, why := range map[string]string{
		"https://api.anthropic.com":         "first-party API",
		"https://API.Anthropic.com.:443/v1": "first-party API",
		"ftp://gateway.platform.svc":        "http or https",
		"gateway.platform.svc":              "http or https",
		"https://":                          "no host",
		"https://key:secret@gateway.svc":    "user information",
	} {
		_, _, err := parseFlags([]string{"--claude-code-base-url", bad})
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "--claude-code-base-url") {
			t.Errorf("--claude-code-base-url %s: %v, want an error saying %q", bad, err, why)
		}
	}
}

// The manager's cache drops typed objects' managed fields, with or without
// --watch-namespaces (controllers.StripManagedFields).
func TestCacheOptions_StripManagedFields(t *testing.T) {
	for _, watch := range []string{"", "team-a"} {
		transform := (&options{watchNamespaces: watch}).cacheOptions().DefaultTransform
		if transform == nil {
			t.Fatalf("--watch-namespaces=%q: no cache transform", watch)
		}
		ws := &v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
		if out, err := transform(ws); err != nil || out.(*v1alpha1.Workspace).ManagedFields != nil {
			t.Errorf("--watch-namespaces=%q: a cached Workspace keeps %v (%v)", watch, ws.ManagedFields, err)
		}
	}
}
