package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/internal/contextsig"
)

// The sidecar binary exists to be small: it must not link the Kubernetes
// client, the controller runtime, the controller's packages or the API types
// (with them Kubernetes' API machinery, which alone costs the sidecar about
// 2 MiB of resident memory), nor the OTLP exporters and gRPC, nor a package
// whose init builds what a context may never use, whatever a change to the
// agent-side packages imports. Agent-side code names the API's vocabulary in api/v1alpha1/vocab.
func TestSidecarLinksNoClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"k8s.io/client-go",
		"sigs.k8s.io/controller-runtime",
		"k8s.io/api/",
		"github.com/loadout-dev/loadout/internal/workspace",
		"github.com/loadout-dev/loadout/controllers",
		// OTLP goes out through internal/ledgerexport's own batching and
		// protowire writer: the SDK's exporters, their generated types and
		// gRPC cost the sidecar about 6 MiB of idle memory, the SDK itself
		// 0.5-0.9 MiB (docs/benchmarks.md).
		"go.opentelemetry.io/",
		"google.golang.org/grpc",
		// External skill sources are fetched by loadout-fetch, a process
		// per fetch (internal/fetchhelper): go-git and go-containerregistry
		// cost the sidecar about 2 MiB idle (docs/benchmarks.md).
		"github.com/go-git/",
		"github.com/google/go-containerregistry",
		"github.com/ProtonMail/go-crypto",
		"github.com/cloudflare/circl",
		// hostd's metrics are internal/promtext's: client_golang, its
		// procfs and expfmt cost the sidecar idle memory (docs/benchmarks.md).
		"github.com/prometheus/",
	}
	exact := map[string]bool{
		"github.com/loadout-dev/loadout/api/v1alpha1":               true,
		"github.com/loadout-dev/loadout/internal/exthost/extobject": true,
		"k8s.io/apimachinery/pkg/apis/meta/v1":                      true,
		"k8s.io/apimachinery/pkg/runtime":                           true,
		// Its init parses every compiled-in CA root at start (0.6 MB of
		// heap held idle); internal/caroots installs them on the first
		// https request instead.
		"golang.org/x/crypto/x509roots/fallback": true,
		// The in-process fetcher and the registry client's packing: the
		// sidecar reads what its helper fetched through internal/sourcecache.
		"github.com/loadout-dev/loadout/internal/sources":  true,
		"github.com/loadout-dev/loadout/internal/ociskill": true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if exact[pkg] {
			t.Errorf("loadout-hostd links %s", pkg)
		}
		for _, f := range forbidden {
			if strings.HasPrefix(pkg, f) {
				t.Errorf("loadout-hostd links %s", pkg)
			}
		}
	}
}

// hostdMaxProductImports is how many of the product's packages
// internal/hostd may import: 16 since external skill sources moved to
// internal/skillsources (18 before), 17 since internal/promtext replaced
// client_golang (a library hostd imported already, not a responsibility
// more: its metrics stayed where they were). Lower it when a
// responsibility moves out; never raise it to land a feature.
const hostdMaxProductImports = 17

// internal/hostd is the hub every agent-side request passes through, and a
// hub grows by imports: each feature that imports its package into hostd
// makes hostd its owner too. A feature gets a package of its own that
// `loadout hostd` (internal/agentcmd) hands to hostd through a small
// interface in hostd.Options, as FailureReporter (internal/hookevents),
// HookWatch (internal/hookwatch) and SkillSources (internal/skillsources)
// are; this fails when hostd imports more of the product than that.
func TestHostdImportsNoMoreProductPackagesThanItsBound(t *testing.T) {
	const module = "github.com/loadout-dev/loadout/"
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, module+"internal/hostd").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var product []string
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, module) {
			product = append(product, strings.TrimPrefix(pkg, module))
		}
	}
	if len(product) > hostdMaxProductImports {
		t.Errorf("internal/hostd imports %d product packages, at most %d:\n  %s\n"+
			"give the feature its own package and wire it into hostd from internal/agentcmd through an interface in hostd.Options "+
			"(as SkillSources, HookWatch and FailureReporter are), instead of importing it into hostd",
			len(product), hostdMaxProductImports, strings.Join(product, "\n  "))
	}
}

// It is `loadout hostd`: the same command, with the hooks and version.
func TestSidecarIsHostd(t *testing.T) {
	out, err := exec.Command("go", "run", ".", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("loadout-hostd --help: %v\n%s", err, out)
	}
	for _, want := range []string{"hostd is the agent-side extension host", "--context-dir", "--context-keys", "hook", "version"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("loadout-hostd --help does not mention %q:\n%s", want, out)
		}
	}
}

// The sidecar binary is hostd and its agent-side helpers only: none of the
// full CLI's commands (materialize, preview, push, ...) that an exec probe
// or a lifecycle hook could run in hostd's container. sandbox is one of the
// helpers: the tree's copy of this binary (bin/loadout) is what an agent
// container of a bound pod starts under (docs/agents.md, "Sandbox"), and
// it only ever narrows what a process may do.
func TestSidecarHasOnlyHostdsCommands(t *testing.T) {
	var names []string
	for _, c := range newRootCommand().Commands() {
		if c.Name() != "help" && c.Name() != "completion" {
			names = append(names, c.Name())
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"hook", "sandbox", "version"}) {
		t.Errorf("loadout-hostd subcommands %v, want hook, sandbox and version only", names)
	}
}

// Trust keys without a Workspace would load a context the manager signed
// for any Workspace and any ConfigMap: hostd refuses to start, saying so.
func TestSidecarRefusesTrustKeysWithoutAWorkspace(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LOADOUT_WORKSPACE", "")
	t.Setenv("LOADOUT_CONTEXT_KEYS", "")
	for _, args := range [][]string{
		{"--context-keys", contextsig.FormatPublicKey(pub)},
		{"--context-keys", contextsig.FormatPublicKey(pub), "--workspace", "just-a-name"},
	} {
		cmd := newRootCommand()
		cmd.SetArgs(append([]string{"--context-dir", t.TempDir(), "--addr", "127.0.0.1:0"}, args...))
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), "--workspace") {
			t.Errorf("loadout-hostd %v: err = %v, want a refusal naming --workspace", args, err)
		}
	}
}

// The sidecar image (Dockerfile target hostd) holds /loadout-hostd and its
// fetch helper /loadout-fetch (the default --fetch-helper, beside it) and
// nothing else, so nothing else can run in hostd's container, and the
// install names that image as the manager's --hostd-image.
func TestSidecarImageHoldsOnlyTheSidecar(t *testing.T) {
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stage string
	copies := map[string][]string{}
	entrypoints := map[string]string{}
	for line := range strings.SplitSeq(string(raw), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 4 && f[0] == "FROM" && strings.EqualFold(f[len(f)-2], "AS"):
			stage = f[len(f)-1]
		case len(f) > 0 && f[0] == "FROM":
			stage = ""
		case len(f) >= 3 && f[0] == "COPY":
			copies[stage] = append(copies[stage], f[len(f)-1])
		case len(f) >= 2 && f[0] == "ENTRYPOINT":
			entrypoints[stage] = strings.Join(f[1:], " ")
		}
	}
	// Besides the binary, only the non-root user's entries (/etc/passwd,
	// /etc/group; hack/images compares the whole file lists).
	binaries := slices.DeleteFunc(slices.Clone(copies["hostd"]), func(p string) bool { return strings.HasPrefix(p, "/etc/") })
	if !slices.Equal(binaries, []string{"/loadout-hostd", "/loadout-fetch"}) {
		t.Errorf("the hostd image copies %v, want /loadout-hostd and /loadout-fetch only", copies["hostd"])
	}
	if got := entrypoints["hostd"]; got != `["/loadout-hostd"]` {
		t.Errorf("the hostd image's entrypoint is %s, want /loadout-hostd", got)
	}
	if got := copies["manager"]; slices.Contains(got, "/loadout-hostd") || !slices.Contains(got, "/manager") {
		t.Errorf("the manager image copies %v, want /manager and not the sidecar", got)
	}
	manager, err := os.ReadFile("../../config/manager/manager.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(manager), "--hostd-image=ghcr.io/loadout-dev/loadout-hostd:") {
		t.Error("config/manager/manager.yaml does not name the hostd image (ghcr.io/loadout-dev/loadout-hostd) as --hostd-image")
	}
}

// The sidecar verifies skill signatures itself (internal/sigcheck, the
// standard library): --skill-signers is parsed, not refused, so a key file
// that is not a PEM public key stops it with the parse error, and a
// private key is refused as one.
func TestSidecarParsesSkillSigners(t *testing.T) {
	dir := t.TempDir()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	for name, content := range map[string]string{
		"garbage":     "not a key",
		"private key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".pem")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := newRootCommand()
		cmd.SetArgs([]string{"--context-dir", t.TempDir(), "--addr", "127.0.0.1:0", "--allow-unsigned-context", "--skill-signers", path})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), "--skill-signers "+path) || strings.Contains(err.Error(), "verifies no skill signatures") {
			t.Errorf("%s: err = %v, want the key file's parse error", name, err)
		}
	}
}
