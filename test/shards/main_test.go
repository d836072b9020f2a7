package shards

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/kubescheme"
	"github.com/loadout-dev/loadout/internal/test/testenv"
)

var (
	cfg *rest.Config
	kit *testenv.Kit
)

// TestMain starts one control plane with sharded list and watch on (the
// ShardedListAndWatch gate), so the managers here use the API server's
// shard selector; TestShards_ClientSideFilter runs a manager that does not.
func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	level := zapcore.ErrorLevel + 1
	if os.Getenv("TEST_VERBOSE") != "" {
		level = -2
	}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.Level(level)))
	env, c, err := testenv.Start(GateOn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	cfg = c
	cl, err := client.New(cfg, client.Options{Scheme: kubescheme.New()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	kit = &testenv.Kit{Client: cl, Timeout: 60 * time.Second, NamespacePrefix: "shards-"}
	platform := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: PlatformNS, Labels: map[string]string{vocab.TrustLabel: string(vocab.TrustTrusted)}}}
	if err := cl.Create(context.Background(), platform); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
