package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/buildinfo"
)

func TestVersion_PrintsVersionCommitAndBuildDate(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		check func(t *testing.T, out string)
	}{
		{[]string{"version"}, func(t *testing.T, out string) {
			t.Helper()
			if want := "loadout " + buildinfo.Get().String() + "\n"; out != want {
				t.Errorf("loadout version = %q, want %q", out, want)
			}
		}},
		{[]string{"version", "-o", "json"}, func(t *testing.T, out string) {
			t.Helper()
			var got buildinfo.Info
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("loadout version -o json: %v\n%s", err, out)
			}
			if got != buildinfo.Get() {
				t.Errorf("loadout version -o json = %+v, want %+v", got, buildinfo.Get())
			}
		}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			cmd := newRootCommand()
			cmd.SetOut(&out)
			cmd.SetArgs(tc.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			tc.check(t, out.String())
		})
	}
}
