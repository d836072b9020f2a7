package charts

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/api/v1alpha1"
	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/test/demo"
	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// cluster is one API server of the test's own (no CRDs: the charts install
// them) with an admin kubeconfig for helm and kubectl.
type cluster struct {
	env        *envtest.Environment
	client     client.Client
	kubeconfig string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	assets, err := testenv.Assets()
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	if _, err := env.Start(); err != nil {
		t.Fatalf("starting envtest from %s: %v", assets, err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := env.AddUser(envtest.User{Name: "charts-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(admin.Config(), client.Options{Scheme: kubescheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{env: env, client: c, kubeconfig: testenv.WriteKubeconfig(t, admin)}
}

func (c *cluster) helm(t *testing.T, args ...string) string {
	t.Helper()
	return string(testenv.Helm(t, append(args, "--kubeconfig", c.kubeconfig)...))
}

func (c *cluster) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed: this test runs `kubectl apply -k config/samples` as a user would")
	}
	cmd := exec.Command(kubectl, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (c *cluster) createNamespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	if err := c.client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
}

// eventually polls f until it succeeds, for a minute: the API server and the
// manager share two cores with other tests, and no test asserts a timing.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func() error {
		if err := f(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	})
}

func (c *cluster) waitEstablished(t *testing.T, crds ...string) {
	t.Helper()
	for _, name := range crds {
		eventually(t, "CRD "+name+" Established", func() error {
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			if err := c.client.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				if m, ok := cond.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
			return fmt.Errorf("not Established")
		})
	}
}

var loadoutCRDs = []string{"skills.loadout.dev", "templates.loadout.dev", "extensions.loadout.dev", "workspaces.loadout.dev"}

// readmeInstall returns the commands of the README's "Install on a cluster"
// block, each split into words (continuation lines joined, comments cut).
func readmeInstall(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Install on a cluster\n")
	_, block, ok2 := strings.Cut(section, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no sh block under \"## Install on a cluster\"")
	}
	var cmds [][]string
	for _, line := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if f := strings.Fields(line); len(f) > 0 {
			cmds = append(cmds, f)
		}
	}
	return cmds
}

// From the repository directory, exactly as the README says: helm install of
// both charts (the loadout chart creating and labelling the platform
// namespace), the samples with `kubectl apply -k config/samples`, the
// manager running as its ServiceAccount imposing the samples' platform guard
// on the tenant's Workspace; then an upgrade that changes nothing and an
// uninstall that keeps the CRDs and the platform namespace.
func TestHelmInstall_AsTheREADMESaysYieldsWorkspacesUnderThePlatformsPolicy(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()

	var ran []string
	for _, cmd := range readmeInstall(t) {
		ran = append(ran, strings.Join(cmd, " "))
		switch cmd[0] {
		case "helm":
			c.helm(t, cmd[1:]...)
		case "kubectl":
			if slices.Contains(cmd, "config/samples") {
				// The platform namespace is labelled by the chart, before
				// the samples (which carry the label too) are applied.
				ns := &corev1.Namespace{}
				if err := c.client.Get(ctx, client.ObjectKey{Name: "loadout-system"}, ns); err != nil || ns.Labels[vocab.TrustLabel] != string(vocab.TrustTrusted) {
					t.Fatalf("after %q the platform namespace is %v (%v); want it labelled %s=trusted by the chart", ran, ns.Labels, err, vocab.TrustLabel)
				}
				c.waitEstablished(t, loadoutCRDs...)
			}
			c.kubectl(t, cmd[1:]...)
		default:
			t.Fatalf("README.md's install runs %q: this test knows helm and kubectl", cmd)
		}
	}
	if want := "helm install loadout charts/loadout"; !slices.ContainsFunc(ran, func(s string) bool { return strings.HasPrefix(s, want) }) ||
		!slices.Contains(ran, "kubectl apply -k config/samples") {
		t.Fatalf("README.md's install block ran %q; want %q and kubectl apply -k config/samples", ran, want)
	}

	log := c.runManagerAsServiceAccount(t)
	eventually(t, "Workspace team-a/dev under the platform's policy", func() error {
		ws := &v1alpha1.Workspace{}
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "dev"}, ws); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(ws.Status.Conditions, string(vocab.ConditionPlatformPolicy)) {
			return fmt.Errorf("PlatformPolicy not True: %+v", ws.Status.Conditions)
		}
		if !slices.ContainsFunc(ws.Status.Extensions, func(e v1alpha1.ExtensionState) bool {
			return e.Namespace == "loadout-system" && e.Enforced && e.State == vocab.ExtensionLoaded
		}) {
			return fmt.Errorf("no imposed platform extension loaded: %+v", ws.Status.Extensions)
		}
		cm := &corev1.ConfigMap{}
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "dev-context"}, cm); err != nil {
			return err
		}
		if !strings.Contains(cm.Data["manifest.json"], `"imposed": true`) {
			return fmt.Errorf("the published context has no imposed platform hook")
		}
		return nil
	})
	if strings.Contains(log.String(), string(vocab.ReasonPlatformNamespaceUnlabelled)) {
		t.Errorf("the manager warned about an unlabelled platform namespace:\n%s", log.String())
	}

	if out := c.helm(t, "upgrade", "loadout", "charts/loadout", "--namespace", "loadout-system"); !strings.Contains(out, "has been upgraded") {
		t.Errorf("helm upgrade with the same values: %s", out)
	}

	dep := &appsv1.Deployment{}
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: "loadout-system", Name: "loadout-manager"}, dep); err != nil {
		t.Fatalf("the loadout chart installed no manager Deployment: %v", err)
	}
	args := dep.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--leader-elect", "--platform-namespace=loadout-system", "--default-trust=restricted", "--metrics-bind-address=:8443"} {
		if !slices.Contains(args, want) {
			t.Errorf("installed manager args %v lack %s", args, want)
		}
	}
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "loadout-system", Name: "loadout-manager"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "loadout-system", Name: "loadout-manager-metrics"}},
	} {
		if err := c.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("%T %s: %v", obj, obj.GetName(), err)
		}
	}

	t.Run("kubectl apply -k config/samples", func(t *testing.T) {
		ws := &v1alpha1.Workspace{}
		if err := c.client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "dev"}, ws); err != nil {
			t.Fatalf("after kubectl apply -k config/samples: Workspace team-a/dev: %v", err)
		}
		ns := &corev1.Namespace{}
		if err := c.client.Get(ctx, client.ObjectKey{Name: "team-a"}, ns); err != nil || ns.Labels[vocab.TrustLabel] != "trusted" {
			t.Errorf("Namespace team-a = %v, %v; want it with loadout.dev/trust=trusted", ns.Labels, err)
		}
		// A second run creates nothing. (It may report Extensions as
		// "configured": client-side apply replaces their hooks list, which
		// the API server completed with defaults.)
		if out := c.kubectl(t, "apply", "-k", "config/samples"); strings.Contains(out, "created") {
			t.Errorf("a second kubectl apply -k config/samples created objects:\n%s", out)
		}
	})

	c.helm(t, "uninstall", "loadout", "--namespace", "loadout-system")
	ns := &corev1.Namespace{}
	if err := c.client.Get(ctx, client.ObjectKey{Name: "loadout-system"}, ns); err != nil || !ns.DeletionTimestamp.IsZero() {
		t.Errorf("after helm uninstall loadout the platform namespace is gone or going (%v): the chart keeps it", err)
	}
	c.helm(t, "uninstall", "loadout-crds")
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := c.client.Get(ctx, client.ObjectKey{Name: "workspaces.loadout.dev"}, crd); err != nil {
		t.Errorf("after helm uninstall loadout-crds (keep: true) the Workspace CRD is gone: %v", err)
	}
}

// managerBinary is cmd/manager, built once for the tests that run it.
var managerBinary = &testenv.Binary{Package: "./cmd/manager"}

// runManagerAsServiceAccount runs the manager binary with the installed
// Deployment's arguments (addresses moved to loopback), authenticated as the
// ServiceAccount the installation binds its roles to, and returns its log.
func (c *cluster) runManagerAsServiceAccount(t *testing.T) *testenv.SyncBuffer {
	t.Helper()
	ctx := context.Background()
	dep := &appsv1.Deployment{}
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: demo.PlatformNamespace, Name: "loadout-manager"}, dep); err != nil {
		t.Fatal(err)
	}
	probeAddr := testnet.FreeAddr(t)
	var args []string
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		if !strings.HasPrefix(a, "--metrics-bind-address=") && !strings.HasPrefix(a, "--health-probe-bind-address=") &&
			!strings.HasPrefix(a, "--mcp-headers-bind-address=") {
			args = append(args, a)
		}
	}
	// Every listener on a free port: another package's manager (the demo's,
	// in test/e2e) may run at the same time.
	args = append(args, "--metrics-bind-address=0", "--health-probe-bind-address="+probeAddr,
		"--mcp-headers-bind-address="+testnet.FreeAddr(t),
		"--leader-election-namespace="+demo.PlatformNamespace)
	sa, err := c.env.AddUser(envtest.User{Name: demo.ManagerUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + demo.PlatformNamespace, "system:authenticated"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The manager lists and watches from its first second: start it once
	// the authorizer has seen the installation's Roles, so a refused first
	// list (and the reflector's backoff) does not stand in for its RBAC.
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + demo.PlatformNamespace, "system:authenticated"}
	for _, attrs := range []authorizationv1.ResourceAttributes{
		{Namespace: "team-a", Verb: "watch", Group: v1alpha1.GroupVersion.Group, Resource: "workspaces"},
		{Namespace: "team-a", Verb: "create", Resource: "configmaps"},
		{Namespace: demo.PlatformNamespace, Verb: "watch", Group: v1alpha1.GroupVersion.Group, Resource: "skills"},
	} {
		testenv.WaitAuthorized(t, c.client, demo.ManagerUser, groups, attrs)
	}
	cmd := exec.Command(managerBinary.Path(t), args...)
	var log testenv.SyncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.Env = append(os.Environ(), "KUBECONFIG="+testenv.WriteKubeconfig(t, sa))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.Interrupt(cmd, 15*time.Second) })
	eventually(t, "manager /readyz", func() error {
		if err := testnet.Answers("http://"+probeAddr+"/readyz", http.StatusOK); err != nil {
			return fmt.Errorf("%v; log:\n%s", err, log.String())
		}
		return nil
	})
	return &log
}

// Namespace-scoped install: the manager, running as its ServiceAccount with
// only the installation's Roles (and read access to Namespaces), publishes
// the context of a Workspace in a watched namespace and never touches one in
// another namespace. Installed both ways: the chart with rbac.scope=namespace
// and kustomize build config/namespaced.
func TestNamespaceScope_ManagerAsServiceAccountServesOnlyWatchedNamespaces(t *testing.T) {
	for _, install := range []struct {
		name string
		run  func(t *testing.T, c *cluster)
	}{
		{"helm rbac.scope=namespace", func(t *testing.T, c *cluster) {
			t.Helper()
			c.helm(t, "install", "loadout-crds", "charts/loadout-crds")
			c.waitEstablished(t, loadoutCRDs...)
			// As the README installs: the namespace first, unlabelled;
			// the chart adopts and labels it.
			c.createNamespace(t, demo.PlatformNamespace, nil)
			c.helm(t, "install", "loadout", "charts/loadout", "--namespace", demo.PlatformNamespace, "--take-ownership",
				"--set", "rbac.scope=namespace", "--set", "rbac.watchNamespaces={team-a}")
			ns := &corev1.Namespace{}
			if err := c.client.Get(context.Background(), client.ObjectKey{Name: demo.PlatformNamespace}, ns); err != nil || ns.Labels[vocab.TrustLabel] != string(vocab.TrustTrusted) {
				t.Fatalf("platform namespace %v (%v); want it labelled by the chart", ns.Labels, err)
			}
		}},
		{"kustomize config/namespaced", func(t *testing.T, c *cluster) {
			t.Helper()
			objs := decodeRendered(t, "kustomize build config/namespaced", testenv.KustomizeBuild(t, "config/namespaced"))
			var applied []manifests.Manifest
			for _, o := range objs {
				applied = append(applied, manifests.Manifest{File: "kustomize build config/namespaced", Object: o})
			}
			if err := manifests.Apply(context.Background(), c.client, applied); err != nil {
				t.Fatal(err)
			}
			c.waitEstablished(t, loadoutCRDs...)
		}},
	} {
		t.Run(install.name, func(t *testing.T) {
			c := startCluster(t)
			ctx := context.Background()
			trusted := map[string]string{vocab.TrustLabel: string(vocab.TrustTrusted)}
			c.createNamespace(t, "team-a", trusted)
			c.createNamespace(t, "team-b", trusted)
			install.run(t, c)

			log := c.runManagerAsServiceAccount(t)
			for _, obj := range []client.Object{
				testenv.Skill(demo.PlatformNamespace, "review", "Platform review.", "PLATFORM-REVIEW"),
				&v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "dev"}},
				&v1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "dev"}},
			} {
				if err := c.client.Create(ctx, obj); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, "Workspace team-a/dev Ready with its context published", func() error {
				ws := &v1alpha1.Workspace{}
				if err := c.client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "dev"}, ws); err != nil {
					return err
				}
				if !meta.IsStatusConditionTrue(ws.Status.Conditions, string(vocab.ConditionReady)) {
					return fmt.Errorf("not Ready: %+v; the manager's log:\n%s", ws.Status.Conditions, log.String())
				}
				cm := &corev1.ConfigMap{}
				if err := c.client.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "dev-context"}, cm); err != nil {
					return err
				}
				if !strings.Contains(cm.Data["skills.json"], "PLATFORM-REVIEW") {
					return fmt.Errorf("the context lacks the platform skill")
				}
				return nil
			})
			// team-a/dev was reconciled; had team-b been watched, its
			// Workspace (created at the same time) would have been too.
			ws := &v1alpha1.Workspace{}
			if err := c.client.Get(ctx, client.ObjectKey{Namespace: "team-b", Name: "dev"}, ws); err != nil {
				t.Fatal(err)
			}
			if ws.Status.ObservedGeneration != 0 || len(ws.Status.Conditions) != 0 {
				t.Errorf("Workspace team-b/dev (not watched) has a status: %+v", ws.Status)
			}
			if err := c.client.Get(ctx, client.ObjectKey{Namespace: "team-b", Name: "dev-context"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
				t.Errorf("ConfigMap team-b/dev-context: %v, want NotFound (team-b is not watched)", err)
			}
			if strings.Contains(strings.ToLower(log.String()), "forbidden") {
				t.Errorf("the manager was refused something its Roles should allow:\n%s", log.String())
			}
		})
	}
}

// An installation made when the chart did not own the namespace (Helm's
// --create-namespace, unlabelled) upgrades with --take-ownership as
// docs/operations.md says: the chart adopts the namespace and labels it.
func TestHelmUpgrade_TakeOwnershipAdoptsAndLabelsAnUnownedPlatformNamespace(t *testing.T) {
	c := startCluster(t)
	c.helm(t, "install", "loadout-crds", "charts/loadout-crds")
	c.waitEstablished(t, loadoutCRDs...)
	c.helm(t, "install", "loadout", "charts/loadout", "--namespace", "loadout-system", "--create-namespace", "--set", "namespace.create=false")
	ns := &corev1.Namespace{}
	if err := c.client.Get(context.Background(), client.ObjectKey{Name: "loadout-system"}, ns); err != nil || ns.Labels[vocab.TrustLabel] != "" {
		t.Fatalf("before: %v %v", ns.Labels, err)
	}
	// Helm reuses the release's values on an upgrade that sets none, so
	// namespace.create must be set again.
	c.helm(t, "upgrade", "loadout", "charts/loadout", "--namespace", "loadout-system", "--reuse-values", "--set", "namespace.create=true", "--take-ownership")
	if err := c.client.Get(context.Background(), client.ObjectKey{Name: "loadout-system"}, ns); err != nil || ns.Labels[vocab.TrustLabel] != string(vocab.TrustTrusted) {
		t.Fatalf("after helm upgrade --take-ownership the platform namespace is %v (%v); want it labelled by the chart", ns.Labels, err)
	}
}
