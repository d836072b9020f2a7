package ledgerexport

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/internal/caroots"
)

// endpoint is where one signal goes, configured as the OTLP exporter
// specification says: OTEL_EXPORTER_OTLP_<SIGNAL>_* first, then
// OTEL_EXPORTER_OTLP_*, over http/protobuf.
type endpoint struct {
	url     string
	headers http.Header
	gzip    bool
	client  *http.Client
}

// defaultTimeout is the specification's default export timeout.
const defaultTimeout = 10 * time.Second

// maxAnswerBytes bounds what hostd reads of a collector's answer.
const maxAnswerBytes = 64 << 10

// endpointFromEnv reads the variables of signal ("LOGS" or "TRACES", whose
// path under the base endpoint is path); ok is false when none names an
// endpoint.
func endpointFromEnv(signal, path string) (_ *endpoint, ok bool, _ error) {
	get := func(name string) string {
		if v := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_" + name); v != "" {
			return v
		}
		return os.Getenv("OTEL_EXPORTER_OTLP_" + name)
	}
	if p := get("PROTOCOL"); p != "" && p != "http/protobuf" {
		return nil, false, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: hostd exports OTLP over http/protobuf only", p)
	}
	e := &endpoint{headers: http.Header{}}
	switch full, base := os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT"), os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); {
	case full != "":
		e.url = full
	case base != "":
		e.url = strings.TrimSuffix(base, "/") + path
	default:
		return nil, false, nil
	}
	u, err := url.Parse(e.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false, fmt.Errorf("OTLP %s endpoint %q: want an http or https URL", strings.ToLower(signal), e.url)
	}
	for pair := range strings.SplitSeq(get("HEADERS"), ",") {
		k, v, found := strings.Cut(pair, "=")
		if !found {
			continue
		}
		k, kerr := url.PathUnescape(strings.TrimSpace(k))
		v, verr := url.PathUnescape(strings.TrimSpace(v))
		if kerr != nil || verr != nil || k == "" {
			return nil, false, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: an entry is not key=value, percent-encoded")
		}
		e.headers.Add(k, v)
	}
	switch c := get("COMPRESSION"); c {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, false, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION=%s: want gzip or none", c)
	}
	timeout := defaultTimeout
	if t := get("TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms <= 0 {
			return nil, false, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT=%s: want milliseconds", t)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil // a collector is reached directly, as hostd reaches everything
	if caFile := get("CERTIFICATE"); caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, false, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, false, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE=%s holds no PEM certificate", caFile)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	e.client = &http.Client{Transport: caroots.Transport(transport), Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return e, true, nil
}

// post sends one export request. A collector's refusal is an error naming
// its status; the batcher then drops the batch (hostd's
// verdicts never wait on telemetry).
func (e *endpoint) post(ctx context.Context, body []byte) error {
	var rd io.Reader = bytes.NewReader(body)
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		_ = zw.Close()
		rd = &buf
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, rd)
	if err != nil {
		return err
	}
	for k, vs := range e.headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("OTLP export to %s: %w", e.url, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswerBytes))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("OTLP export to %s: %s", e.url, resp.Status)
	}
	return nil
}
