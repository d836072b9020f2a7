package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/buildinfo"
	"github.com/loadout-dev/loadout/internal/jsonlimit"
	"github.com/loadout-dev/loadout/internal/outbound"
)

// Endpoint is an MCP server's streamable HTTP endpoint and how to call it.
type Endpoint struct {
	URL string
	// CABundle verifies an https URL's certificate; empty means the system roots.
	CABundle []byte
	// Timeout bounds each HTTP exchange (one tool call, one page of tools).
	Timeout time.Duration
	// Anonymous: the server is outside the cluster and gets no service
	// token (outbound.Request.Anonymous).
	Anonymous bool
	// Headers, when set, gives the headers every request to the server
	// carries (an API key from a platform Secret). Its error fails the
	// request before anything is sent; its values are never logged.
	Headers func(context.Context) (http.Header, error)
}

// MaxAnswerValues bounds the JSON values and keys of one answer, counted
// before the SDK decodes it (decoded, each costs ~256 bytes).
const MaxAnswerValues = jsonlimit.MaxValues

// doerTransport is the http.RoundTripper the SDK's client uses: each request
// is one outbound call, whose answer arrives whole and capped. Non-2xx
// answers become bodiless responses with their status, so the SDK sees a 404
// for a session the server forgot (and reconnects) without outbound ever
// reading an error body.
type doerTransport struct {
	doer outbound.Doer
	ep   Endpoint
}

func (t doerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	header := req.Header.Clone()
	if t.ep.Headers != nil {
		extra, err := t.ep.Headers(req.Context())
		if err != nil {
			return nil, err
		}
		for k, vs := range extra {
			header[k] = vs
		}
	}
	resp, err := t.doer.Do(req.Context(), outbound.Request{
		Method: req.Method, Target: outbound.Target{URL: t.ep.URL, CABundle: t.ep.CABundle},
		Body: body, Header: header, Timeout: t.ep.Timeout, Anonymous: t.ep.Anonymous,
	})
	var status *outbound.StatusError
	switch {
	case errors.As(err, &status):
		return &http.Response{StatusCode: status.StatusCode, Status: status.Status, Header: http.Header{},
			Body: http.NoBody, Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
	case err != nil:
		return nil, err
	}
	if _, err := jsonlimit.Admit(req.Context(), resp.Body, MaxAnswerValues); err != nil {
		return nil, fmt.Errorf("answer refused before decoding: it %w", err)
	}
	h := resp.Header.Clone()
	h.Set("Content-Length", strconv.Itoa(len(resp.Body)))
	return &http.Response{StatusCode: resp.StatusCode, Status: http.StatusText(resp.StatusCode), Header: h,
		Body: io.NopCloser(bytes.NewReader(resp.Body)), ContentLength: int64(len(resp.Body)), Request: req,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// connect opens an MCP session to ep: initialize, then initialized. The
// client asks for no standalone stream (a hanging GET a server could hold
// open) and never reconnects on its own: callers decide when to retry.
func connect(ctx context.Context, doer outbound.Doer, ep Endpoint) (*mcp.ClientSession, error) {
	if doer == nil {
		return nil, errors.New("no outbound client")
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "loadout", Version: buildinfo.Get().Version}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:             ep.URL,
		HTTPClient:           &http.Client{Transport: doerTransport{doer: doer, ep: ep}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}
	return client.Connect(ctx, transport, nil)
}
