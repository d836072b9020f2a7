package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/shard"
)

func TestShardFlags_PlanAndShardGoTogether(t *testing.T) {
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, shard.EvenPlan(3).YAML(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		err  string
	}{
		{nil, ""},
		{[]string{"--shard=1"}, "needs --shard-plan"},
		{[]string{"--shard-plan=" + plan}, "needs --shard"},
		{[]string{"--shard-plan=" + plan, "--shard=7"}, "not in the plan"},
		{[]string{"--shard-plan=" + plan, "--shard=1"}, ""},
	} {
		o, _, err := parseFlags(c.args)
		if err != nil {
			t.Fatal(err)
		}
		owner, err := o.shard.ownership(o.platform())
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: %v, want %q", c.args, err, c.err)
		case c.err == "" && len(c.args) > 0 && (owner == nil || owner.Shard.Name != "1" || !owner.InView("loadout-system")):
			t.Errorf("%v: ownership %+v", c.args, owner)
		}
	}
}
