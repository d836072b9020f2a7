package promtext

import (
	"net/http"
	"strconv"
	"time"
)

// InstrumentHandler counts each request of h in requests, labelled with
// label and the answer's status code (200 when h wrote none), and times it
// in duration, labelled with label: what promhttp's
// InstrumentHandlerCounter and InstrumentHandlerDuration did for hostd. The
// response writer it hands h keeps http.Flusher, which MCP's streamable
// transport needs, and unwraps for http.ResponseController.
func InstrumentHandler(requests *CounterVec, duration *HistogramVec, label string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		duration.WithLabelValues(label).Observe(time.Since(start).Seconds())
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		requests.WithLabelValues(label, strconv.Itoa(code)).Inc()
	})
}

// statusWriter notes the status code written.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush implements http.Flusher when the writer underneath does.
func (s *statusWriter) Flush() {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
