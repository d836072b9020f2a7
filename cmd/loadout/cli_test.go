package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/loadout-dev/loadout/internal/resources/resourcestest"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

const samplesDir = "../../config/samples"

// run executes the loadout command tree as the binary would.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCommand()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s (run go test -update if intended):\n%s", path, got)
	}
}

// previewData runs preview on args and returns the single ConfigMap's data.
func previewData(t *testing.T, args ...string) map[string]string {
	t.Helper()
	out, stderr, err := run(t, append([]string{"preview"}, args...)...)
	if err != nil {
		t.Fatalf("preview: %v\n%s", err, stderr)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(out), &cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

// previewDir is previewData written as a context directory, as the kubelet
// mounts the ConfigMap for hostd and the context commands.
func previewDir(t *testing.T, args ...string) string {
	t.Helper()
	return resourcestest.Tree(t, previewData(t, args...))
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q", what, sub)
		}
	}
}

func mustNotContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			t.Errorf("%s contains %q", what, sub)
		}
	}
}

// writeFiles writes files (relative path → content) below dir; it is
// resourcestest.WriteTree, which the engine's neighbours use.
var writeFiles = resourcestest.WriteTree
