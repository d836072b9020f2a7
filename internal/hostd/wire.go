package hostd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/loadout-dev/loadout/internal/exthost"
)

// MaxBodyBytes bounds a request body. It equals the input size the CEL cost
// estimate assumes (exthost.MaxInputSize), so no hook sees a bigger value.
const MaxBodyBytes = exthost.MaxInputSize

// Wire shapes of DESIGN.md "CLI". Fields may be added, never renamed.
type (
	// CallRequest is the body of /v1/before (call) and /v1/after (call, result).
	CallRequest struct {
		Call   exthost.ToolCall    `json:"call"`
		Result *exthost.ToolResult `json:"result,omitempty"`
	}
	// BeforeResponse is {"allowed":true} or a paired blocked result.
	BeforeResponse struct {
		Allowed     bool                 `json:"allowed"`
		Result      *exthost.ToolResult  `json:"result,omitempty"`
		Diagnostics []exthost.Diagnostic `json:"diagnostics,omitempty"`
	}
	// AfterResponse carries the after hooks' diagnostics; always a list.
	AfterResponse struct {
		Diagnostics []exthost.Diagnostic `json:"diagnostics"`
	}
	// RenderRequest renders a template.
	RenderRequest struct {
		Template string            `json:"template"`
		Args     map[string]string `json:"args"`
	}
	// ActivateRequest activates a skill with some of its files.
	ActivateRequest struct {
		Skill string   `json:"skill"`
		Files []string `json:"files"`
	}
	// ErrorResponse accompanies every non-2xx status.
	ErrorResponse struct {
		Error string `json:"error"`
	}
)

// errTooLarge is a body over MaxBodyBytes.
var errTooLarge = fmt.Errorf("request body exceeds %d bytes", MaxBodyBytes)

// decode reads exactly one JSON document of at most MaxBodyBytes into v.
// Unknown fields are accepted: agents may send newer shapes.
func decode(r io.Reader, v any) error {
	body, err := io.ReadAll(io.LimitReader(r, MaxBodyBytes+1))
	if err != nil {
		return err
	}
	if len(body) > MaxBodyBytes {
		return errTooLarge
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("request body: trailing data after the JSON document")
	}
	return nil
}

// DecodeCall decodes a /v1/before or /v1/after body; withResult requires the
// result an after call must carry.
func DecodeCall(r io.Reader, withResult bool) (CallRequest, error) {
	var req CallRequest
	if err := decode(r, &req); err != nil {
		return req, err
	}
	if req.Call.ID == "" || req.Call.Name == "" {
		return req, errors.New("call.id and call.name are required")
	}
	if withResult && req.Result == nil {
		return req, errors.New("result is required")
	}
	return req, nil
}
