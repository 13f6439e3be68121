package httpbody

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doFunc is an aws.HTTPClient that answers with a function.
type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

func TestBodiesLoseWriterTo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}))
	defer srv.Close()
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()

	var seen []io.Reader
	spy := doFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r.Body)
		return (&http.Client{Transport: Transport(base)}).Do(r)
	})
	for name, c := range map[string]interface {
		Do(*http.Request) (*http.Response, error)
	}{
		"Client":    Client(spy),
		"Transport": &http.Client{Transport: Transport(base)},
	} {
		t.Run(name, func(t *testing.T) {
			// A body the SDK sends implements io.WriterTo, as this one does.
			body := bytes.NewReader([]byte(`{"messages":[]}`))
			req, err := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(body))
			require.NoError(t, err)
			_, isWriterTo := req.Body.(io.WriterTo)
			require.True(t, isWriterTo)

			resp, err := c.Do(req)
			require.NoError(t, err)
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, `{"messages":[]}`, string(got))
		})
	}
	require.Len(t, seen, 1)
	_, isWriterTo := seen[0].(io.WriterTo)
	assert.False(t, isWriterTo, "the body reached the transport with WriterTo")
}

// What Transport sends: the body without WriterTo, the caller's request
// left as it was, a request without a body as it is.
func TestPlain(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1", io.NopCloser(bytes.NewReader([]byte("x"))))
	require.NoError(t, err)
	sent := plain(req)
	_, isWriterTo := sent.Body.(io.WriterTo)
	assert.False(t, isWriterTo)
	_, isWriterTo = req.Body.(io.WriterTo)
	assert.True(t, isWriterTo, "the caller's request was changed")

	get, err := http.NewRequest(http.MethodGet, "http://127.0.0.1", nil)
	require.NoError(t, err)
	assert.Same(t, get, plain(get))
}
