// Package httpserve runs an http.Server for as long as a context lives: the
// one shutdown sequence of hostd's listeners and the sample tool Service.
package httpserve

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// ShutdownGrace is how long requests in flight get to finish once the
// context is done.
const ShutdownGrace = 5 * time.Second

// UntilDone runs serve (srv.ListenAndServe, or srv.Serve on a listener)
// until it fails or ctx is done, then shuts srv down gracefully. A server
// closed by the shutdown is not an error.
func UntilDone(ctx context.Context, srv *http.Server, serve func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
		defer cancel()
		if err := srv.Shutdown(shutdown); err != nil {
			return err
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
