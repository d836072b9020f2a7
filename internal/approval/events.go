package approval

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// CreateEvent creates a core/v1 Event (JSON) in the Client's namespace, as
// the same pod-bound identity that creates Approvals: hostd's one identity
// for the API server. The API server refuses an Event about an object of
// another namespace, and RBAC lets the identity create Events only in its
// own.
func (c *Client) CreateEvent(ctx context.Context, event []byte) error {
	resp, err := c.do(ctx, http.MethodPost, c.server+"/api/v1/namespaces/"+url.PathEscape(c.namespace)+"/events", event)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 == 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxObjectBytes))
		resp.Body.Close()
		return nil
	}
	_, err = readObject(resp)
	return err
}
