package charts

import (
	"io"
	"os"
	"testing"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(crzap.New(crzap.WriteTo(io.Discard))) // envtest's progress lines; failures come back as errors
	code := m.Run()
	managerBinary.Remove()
	os.Exit(code)
}
