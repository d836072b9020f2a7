package testenv

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
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/loadout-dev/loadout/api/v1alpha1/vocab"
	"github.com/loadout-dev/loadout/internal/kubescheme"
)

// Suite is the control plane a package's TestMain starts once for all its
// tests.
type Suite struct {
	Env    *envtest.Environment
	Config *rest.Config
	// Client is direct (uncached), with kubescheme.New(): what a user sees.
	Client client.Client
	// Kit wraps Client with the suite's timeout and namespace prefix.
	Kit *Kit
}

// SuiteOptions configure RunSuite.
type SuiteOptions struct {
	// Timeout and NamespacePrefix are the Kit's.
	Timeout         time.Duration
	NamespacePrefix string
	// TrustedNamespaces are created labelled trusted before setup runs, as
	// an installation labels its platform namespaces: the manager honours a
	// platform namespace only with its trust label.
	TrustedNamespaces []string
	// LogErrors sends the controllers' errors to stderr; without it they are
	// hidden too, for suites that provoke expected errors. TEST_VERBOSE
	// shows the controllers' detail either way.
	LogErrors bool
	// Environment adjusts the control plane before it starts, as Start's
	// options do.
	Environment []func(*envtest.Environment)
}

// RunSuite is the body of a TestMain: it starts the control plane, its
// client and the trusted namespaces, then calls setup (nil for none), which
// starts what the package tests, such as a manager, and returns what stops
// it (nil for nothing). It runs the tests, stops everything and returns the
// exit code; a failure to start is printed and makes it 1.
func RunSuite(m *testing.M, o SuiteOptions, setup func(*Suite) (stop func() error, err error)) int {
	level := zapcore.ErrorLevel + 1
	if o.LogErrors {
		level = zapcore.ErrorLevel
	}
	if os.Getenv("TEST_VERBOSE") != "" {
		level = zapcore.Level(-2)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true), zap.Level(level)))

	s, err := startSuite(o)
	if s != nil {
		defer func() {
			if err := s.Env.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "stopping envtest:", err)
			}
		}()
	}
	var stop func() error
	if err == nil && setup != nil {
		stop, err = setup(s)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if stop != nil {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping:", err)
		}
	}
	return code
}

// startSuite starts the control plane and what RunSuite sets up on it; it
// returns the suite, to stop, whenever the control plane started.
func startSuite(o SuiteOptions) (*Suite, error) {
	env, cfg, err := Start(o.Environment...)
	if err != nil {
		return nil, err
	}
	s := &Suite{Env: env, Config: cfg}
	if s.Client, err = client.New(cfg, client.Options{Scheme: kubescheme.New()}); err != nil {
		return s, err
	}
	s.Kit = &Kit{Client: s.Client, Timeout: o.Timeout, NamespacePrefix: o.NamespacePrefix}
	for _, ns := range o.TrustedNamespaces {
		if err := s.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
			Labels: map[string]string{vocab.TrustLabel: string(vocab.TrustTrusted)}}}); err != nil {
			return s, err
		}
	}
	return s, nil
}
