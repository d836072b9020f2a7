package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/shard"
)

func TestShardsPlan_FromAListBalancesSequentialNames(t *testing.T) {
	var in strings.Builder
	for i := range 200 {
		fmt.Fprintf(&in, "ns-%d 2\n", i)
	}
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetIn(strings.NewReader(in.String()))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs([]string{"shards", "plan", "--shards", "3", "--from", "-"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	plan, err := shard.ParsePlan(out.Bytes())
	if err != nil {
		t.Fatalf("the plan does not parse: %v\n%s", err, out.String())
	}
	if len(plan.Shards) != 3 || !strings.Contains(errOut.String(), "heaviest/mean 1.0") {
		t.Errorf("plan %s\nreport %s", out.String(), errOut.String())
	}
}
