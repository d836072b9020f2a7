package hostd

import (
	"os"
	"testing"
)

func TestZZWriteCtx(t *testing.T) {
	dir := os.Getenv("ZZ_CTX_DIR")
	if dir == "" {
		t.Skip()
	}
	writeConfigMapDir(t, dir, contextData(t, fixedRegistry()))
}
