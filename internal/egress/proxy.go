package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RefusalPrefix starts every refusal the proxy answers, so an agent (and an
// after hook reading the command's output) can tell the sandbox's refusal
// from the server's.
const RefusalPrefix = "[loadout sandbox] egress"

// Proxy is an HTTP proxy that lets through, by name, only what Rules
// allow: CONNECT NAME:PORT (any TLS or other TCP traffic) and plain HTTP
// requests for absolute http:// URLs. It resolves names itself, so what the
// agent's resolver says does not matter.
type Proxy struct {
	// Rules are the allowed hosts, in normal form (Normal).
	Rules []string
	// Dial opens upstream connections; nil, a net.Dialer with a 10 s
	// timeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Refused, when set, is told of each refusal (host:port).
	Refused func(target string)
}

// maxHeaderBytes bounds a request's head: the agent is not trusted.
const maxHeaderBytes = 64 << 10

// Serve accepts connections on l until it is closed.
func (p *Proxy) Serve(l net.Listener) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, MaxHeaderBytes: maxHeaderBytes}
	err := srv.Serve(l)
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (p *Proxy) dial(ctx context.Context, addr string) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, "tcp", addr)
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	return d.DialContext(ctx, "tcp", addr)
}

// target splits host:port, giving a URL's scheme default when the port is
// missing.
func target(hostport string, defaultPort int) (string, int, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		if !strings.Contains(err.Error(), "missing port") {
			return "", 0, err
		}
		host, ps = strings.Trim(hostport, "[]"), strconv.Itoa(defaultPort)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return "", 0, fmt.Errorf("bad target %q", hostport)
	}
	return host, port, nil
}

func (p *Proxy) refuse(w http.ResponseWriter, host string, port int) {
	t := net.JoinHostPort(host, strconv.Itoa(port))
	if p.Refused != nil {
		p.Refused(t)
	}
	rules := "none"
	if len(p.Rules) > 0 {
		rules = strings.Join(p.Rules, ", ")
	}
	http.Error(w, fmt.Sprintf("%s to %s refused: the sandbox's network.hosts allow %s", RefusalPrefix, t, rules), http.StatusForbidden)
}

// open connects to hostport (defaultPort when it names none) if the rules
// allow it; otherwise, or when the connection fails, it answers w and
// reports false.
func (p *Proxy) open(w http.ResponseWriter, r *http.Request, hostport string, defaultPort int) (net.Conn, bool) {
	host, port, err := target(hostport, defaultPort)
	if err != nil {
		http.Error(w, RefusalPrefix+": "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	if !Allows(p.Rules, host, port) {
		p.refuse(w, host, port)
		return nil, false
	}
	upstream, err := p.dial(r.Context(), net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		http.Error(w, RefusalPrefix+": "+err.Error(), http.StatusBadGateway)
		return nil, false
	}
	return upstream, true
}

// ServeHTTP answers one proxy request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, RefusalPrefix+": this is a proxy; send CONNECT or an absolute http:// URL", http.StatusBadRequest)
		return
	}
	upstream, ok := p.open(w, r, r.URL.Host, 80)
	if !ok {
		return
	}
	defer upstream.Close()
	out := r.Clone(r.Context())
	// The Host header is the checked name: a request for an allowed host
	// must not ask that server for another of its virtual hosts.
	out.RequestURI, out.Close, out.Host = "", true, r.URL.Host
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	if err := out.Write(upstream); err != nil {
		http.Error(w, RefusalPrefix+": "+err.Error(), http.StatusBadGateway)
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(upstream), out)
	if err != nil {
		http.Error(w, RefusalPrefix+": "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// connect tunnels CONNECT host:port when the rules allow it.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	upstream, ok := p.open(w, r, r.Host, DefaultPort)
	if !ok {
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, RefusalPrefix+": cannot tunnel", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		conn.Close()
		upstream.Close()
		return
	}
	splice(conn, buf.Reader, upstream)
}

// splice copies both ways until either side is done, then closes both.
func splice(client net.Conn, clientBuffered io.Reader, upstream net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(upstream, clientBuffered)
		closeWrite(upstream)
	}()
	go func() {
		defer wg.Done()
		_, _ = io.Copy(client, upstream)
		closeWrite(client)
	}()
	wg.Wait()
	client.Close()
	upstream.Close()
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
}
