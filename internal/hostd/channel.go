package hostd

import (
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"strings"
)

// The API listener has no authentication: loopback is its only boundary. A
// browser on the same machine (or in the same pod's network namespace) can
// still reach loopback, two ways:
//
//   - a page on another origin sends a "simple" request (POST with
//     text/plain, no preflight) to 127.0.0.1:8181, which runs a tool;
//   - DNS rebinding: a name the page controls is re-pointed at 127.0.0.1, so
//     the page reads hostd's answers as same-origin (the registry, MCP).
//
// localOnly refuses both before any route runs: the Host must be a loopback
// name or address (a rebound name never is), a browser request must come
// from no page or the same origin (Sec-Fetch-Site, else Origin, as Go's
// CrossOriginProtection decides), and a request with a body must say it is
// JSON, which a page cannot send cross-origin without a CORS preflight that
// hostd never answers. Agents, curl, the Pi package and `loadout hook
// claude-code` send none of the browser headers and JSON bodies, so they are
// unaffected. The probe listener (ProbeHandler) is not guarded: the kubelet
// probes it by the pod IP.
func localOnly(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkLoopbackHost(r.Host); err != nil {
			writeError(w, http.StatusForbidden, err)
			return
		}
		if err := checkSameOrigin(cop, r); err != nil {
			writeError(w, http.StatusForbidden, err)
			return
		}
		if hasBody(r.Method) {
			if err := checkJSON(r.Header.Get("Content-Type")); err != nil {
				writeError(w, http.StatusUnsupportedMediaType, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// checkLoopbackHost accepts localhost and loopback addresses, with any port.
// An empty Host (HTTP/1.0, in-process callers) is no browser's and passes.
func checkLoopbackHost(hostport string) error {
	if hostport == "" {
		return nil
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("host %q is not loopback: hostd answers only requests addressed to 127.0.0.1, [::1] or localhost", hostport)
}

// checkSameOrigin refuses a cross-origin browser request, for every method.
// CrossOriginProtection passes GET and HEAD because a page cannot read the
// answer cross-origin; hostd's GETs are for agents, never for pages, so they
// are judged like a POST.
func checkSameOrigin(cop *http.CrossOriginProtection, r *http.Request) error {
	probe := r
	if !hasBody(r.Method) {
		probe = new(http.Request)
		*probe = *r
		probe.Method = http.MethodPost
	}
	if err := cop.Check(probe); err != nil {
		return errors.New("cross-origin browser requests are refused: hostd serves the agents of its pod, not web pages")
	}
	return nil
}

// hasBody reports whether requests of method carry a body hostd decodes.
func hasBody(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

// checkJSON accepts application/json with any parameters (charset).
func checkJSON(contentType string) error {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return fmt.Errorf("content type %q: hostd accepts only application/json request bodies", contentType)
	}
	return nil
}
