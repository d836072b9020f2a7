package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/test/demo"
	"github.com/loadout-dev/loadout/internal/test/manifests"
	"github.com/loadout-dev/loadout/internal/test/testenv"
	"github.com/loadout-dev/loadout/internal/test/testnet"
)

// The manager's metrics endpoint, as installed by config/default: HTTPS behind
// internal/metricsauth (TokenReview, then SubjectAccessReview), with the
// manager running as its ServiceAccount with config/rbac's roles. A token
// without ClusterRole loadout-metrics-reader gets 403; Prometheus's
// ServiceAccount, bound by config/prometheus, gets the metrics.
func TestMetrics_SecuredEndpointNeedsTheMetricsReaderRole(t *testing.T) {
	assets, err := testenv.Assets()
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	admin, err := client.New(cfg, client.Options{Scheme: kubescheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	var applied []manifests.Manifest
	for _, dir := range []string{"rbac", "prometheus"} {
		m, err := manifests.Read(filepath.Join(testenv.RepoRoot(), "config", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range m {
			if x.Object.GetKind() != "ServiceMonitor" { // no Prometheus Operator CRDs here
				applied = append(applied, x)
			}
		}
	}
	for _, ns := range []string{demo.PlatformNamespace, "monitoring"} {
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := manifests.Apply(ctx, admin, applied); err != nil {
		t.Fatal(err)
	}

	// The manager, as its ServiceAccount, serving metrics the way the flags say.
	addr := testnet.FreeAddr(t)
	o, _, err := parseFlags([]string{"--metrics-bind-address=" + addr})
	if err != nil {
		t.Fatal(err)
	}
	managerUser, err := env.AddUser(envtest.User{Name: demo.ManagerUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + demo.PlatformNamespace, "system:authenticated"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(managerUser.Config(), ctrl.Options{Metrics: o.metricsOptions(), HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	cs := kubernetes.NewForConfigOrDie(cfg)
	token := func(name string) string {
		t.Helper()
		if _, err := cs.CoreV1().ServiceAccounts("monitoring").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := cs.CoreV1().ServiceAccounts("monitoring").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	prometheus, stranger := token("prometheus-k8s"), token("stranger")

	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the manager's self-signed certificate
	}}
	scrape := func(token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", "https://"+addr+"/metrics", nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := httpc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	// Wait for the server (the certificate is generated at start).
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, err := scrape("")
		if err == nil && code == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics endpoint https://%s never answered an anonymous scrape with 401 (last: %d, %v)", addr, code, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	for _, tc := range []struct {
		who, token string
		want       int
	}{
		{"a ServiceAccount without loadout-metrics-reader", stranger, http.StatusForbidden},
		{"Prometheus's ServiceAccount (config/prometheus binding)", prometheus, http.StatusOK},
		{"a made-up token", "not-a-token", http.StatusUnauthorized},
	} {
		code, body, err := scrape(tc.token)
		if err != nil {
			t.Fatalf("%s: %v", tc.who, err)
		}
		if code != tc.want {
			t.Errorf("%s: GET /metrics = %d, want %d\n%s", tc.who, code, tc.want, body)
		}
		if code == http.StatusOK && !strings.Contains(body, "loadout_configmap_applies_total") {
			t.Errorf("%s: the metrics lack loadout_configmap_applies_total:\n%.500s", tc.who, body)
		}
	}
	if t.Failed() {
		fmt.Fprintln(os.Stderr, "hint: config/rbac must grant the manager tokenreviews and subjectaccessreviews create")
	}
}
