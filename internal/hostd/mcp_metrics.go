package hostd

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout-dev/loadout/internal/mcpskills"
)

// mcpMethods are the MCP methods counted under their own name; any other
// (a client may send any string) is counted as "other", so a local process
// cannot grow the metrics without bound.
var mcpMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true, "prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true, "resources/subscribe": true,
	"resources/unsubscribe": true, mcpskills.MethodList: true, mcpskills.MethodGet: true, mcpskills.MethodDirectoryRead: true,
	"notifications/initialized": true, "notifications/cancelled": true,
}

// mcpMetrics is the MCP server's one receiving middleware: every request is
// timed and counted under endpoint "mcp METHOD" with code "ok", "tool_error"
// (a tools/call whose result is an error: refused, blocked, invalid or
// failed), the JSON-RPC error code, or "error".
func (s *Server) mcpMetrics(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		start := time.Now()
		if method == "initialize" {
			s.hookWatch.MCPSession()
		}
		res, err := next(ctx, method, req)
		code := "ok"
		var rpc *jsonrpc.Error
		switch {
		case errors.As(err, &rpc):
			code = strconv.FormatInt(rpc.Code, 10)
		case err != nil:
			code = "error"
		default:
			if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
				code = "tool_error"
			}
		}
		if !mcpMethods[method] {
			method = "other"
		}
		endpoint := "mcp " + method
		s.metrics.duration.WithLabelValues(endpoint).Observe(time.Since(start).Seconds())
		s.metrics.requests.WithLabelValues(endpoint, code).Inc()
		return res, err
	}
}
