package hostd

import (
	"context"
	"net/http"
	"time"

	"github.com/loadout-dev/loadout/internal/httpserve"
)

// probeRoutes are the endpoints that reveal nothing of the context and change
// nothing: liveness, readiness (the served hash) and the metrics.
func (s *Server) probeRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.handleReady)
	mux.Handle("GET /metrics", s.metrics.registry)
}

// ProbeHandler serves only /healthz, /readyz and /metrics. It is meant for a
// second listener on the pod IP (hostd --probe-addr), so that the kubelet can
// probe hostd and Prometheus can scrape it while the /v1 API, which has no
// authentication, stays on loopback.
func (s *Server) ProbeHandler() http.Handler {
	mux := http.NewServeMux()
	s.probeRoutes(mux)
	return mux
}

// ListenAndServeProbes serves ProbeHandler on addr until ctx is done. It
// neither loads nor reloads the context: ListenAndServe does, and the probes
// report what it serves.
func (s *Server) ListenAndServeProbes(ctx context.Context, addr string) error {
	srv := &http.Server{Addr: addr, Handler: s.ProbeHandler(), ReadHeaderTimeout: 5 * time.Second}
	return httpserve.UntilDone(ctx, srv, srv.ListenAndServe)
}
