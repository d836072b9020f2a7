package agentcmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/loadout-dev/loadout/internal/ledger"
	"github.com/loadout-dev/loadout/internal/ledgerexport"
)

// exportLedger sends the decision ledger over OTLP when the environment
// names an endpoint (OTEL_EXPORTER_OTLP_ENDPOINT): led's records (a ledger
// to nowhere when --ledger=false) go to the exporter too. The returned
// function flushes it. An exporter that cannot be built is said on warn and
// leaves the ledger as it was: hostd's verdicts never wait on telemetry.
func exportLedger(ctx context.Context, led *ledger.Writer, warn io.Writer, attrs ...ledgerexport.Attr) (*ledger.Writer, func()) {
	exp, err := ledgerexport.FromEnv(ctx, attrs...)
	if err != nil {
		_, _ = fmt.Fprintf(warn, "loadout hostd: the decision ledger is not exported: %v\n", err)
		return led, func() {}
	}
	if exp == nil {
		return led, func() {}
	}
	if led == nil {
		led = ledger.NewWriter(io.Discard)
	}
	led.OnRecord = exp.Record
	led.OnAnchor = exp.Anchor
	return led, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = exp.Shutdown(ctx)
	}
}
