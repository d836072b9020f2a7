package agenttest

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// OTLP is an in-process OTLP/HTTP receiver (protobuf, /v1/logs and
// /v1/traces): what a collector would get from hostd's ledger export.
type OTLP struct {
	// URL is its base URL, for OTEL_EXPORTER_OTLP_ENDPOINT.
	URL string

	mu    sync.Mutex
	logs  []string
	spans []Span
}

// Span is a received span: its name, its parent's name ("" for a root)
// and its string attributes.
type Span struct {
	Name, Parent string
	Attributes   map[string]string
	StartNanos   uint64
	EndNanos     uint64
}

// StartOTLP starts a receiver; the test's cleanup stops it.
func StartOTLP(t testing.TB) *OTLP {
	t.Helper()
	o := &OTLP{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/logs", func(w http.ResponseWriter, r *http.Request) {
		var req collogs.ExportLogsServiceRequest
		if !decodeOTLP(w, r, &req) {
			return
		}
		o.mu.Lock()
		for _, rl := range req.ResourceLogs {
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					o.logs = append(o.logs, lr.GetBody().GetStringValue())
				}
			}
		}
		o.mu.Unlock()
		answerOTLP(w, &collogs.ExportLogsServiceResponse{})
	})
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		var req coltrace.ExportTraceServiceRequest
		if !decodeOTLP(w, r, &req) {
			return
		}
		o.mu.Lock()
		names := map[string]string{}
		var batch []Span
		var parents []string
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names[string(s.SpanId)] = s.Name
					sp := Span{Name: s.Name, Attributes: map[string]string{}, StartNanos: s.StartTimeUnixNano, EndNanos: s.EndTimeUnixNano}
					for _, a := range s.Attributes {
						sp.Attributes[a.Key] = a.GetValue().GetStringValue()
					}
					batch = append(batch, sp)
					parents = append(parents, string(s.ParentSpanId))
				}
			}
		}
		for i := range batch {
			batch[i].Parent = names[parents[i]]
			if batch[i].Parent == "" && parents[i] != "" {
				batch[i].Parent = "?" // a parent exported in another batch
			}
		}
		o.spans = append(o.spans, batch...)
		o.mu.Unlock()
		answerOTLP(w, &coltrace.ExportTraceServiceResponse{})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	o.URL = srv.URL
	return o
}

// Logs are the bodies of the log records received so far.
func (o *OTLP) Logs() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.logs...)
}

// Spans are the spans received so far.
func (o *OTLP) Spans() []Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Span(nil), o.spans...)
}

func decodeOTLP(w http.ResponseWriter, r *http.Request, m proto.Message) bool {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		body = zr
	}
	b, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func answerOTLP(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}
