package main

import (
	"testing"

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
