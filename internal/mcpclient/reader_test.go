package mcpclient_test

import (
	"bytes"
	"io"
	"net/http"
)

// readerOf puts back the bytes a test handler peeked at before the rest of
// r's body.
func readerOf(peeked []byte, r *http.Request) io.ReadCloser {
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(peeked), r.Body), r.Body}
}
