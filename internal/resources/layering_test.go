package resources

import (
	"os/exec"
	"strings"
	"testing"
)

// The engine is pure: neither it nor any package of this module it imports
// (the API types, the contract, the SKILL.md format) reads the disk or talks
// to a Kubernetes client, and nothing it links does Kubernetes I/O. The
// standard library's own use of os (fmt prints to os.Stdout) is not ours to
// judge, so the disk rule applies to the module's packages; `make lint`
// enforces the same rule on every change (.golangci.yml, rule "engine").
func TestEngineImportsNoDiskAndNoClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Imports " "}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/loadout-dev/loadout/"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "|")
		if strings.HasPrefix(pkg, "k8s.io/client-go") || strings.HasPrefix(pkg, "sigs.k8s.io/controller-runtime") {
			t.Errorf("the engine links %s", pkg)
		}
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			switch imp {
			case "os", "io/fs", "path/filepath", "net/http":
				t.Errorf("%s, which the engine builds on, imports %s", pkg, imp)
			}
		}
	}
}
