package bedrocktest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// inProcessURL is the URL of a Server made by NewInProcessServer: a name
// that never resolves, as nothing dials it.
const inProcessURL = "http://bedrocktest.invalid"

// NewInProcessServer returns a Server answering with h in process, with no
// socket. Its Client and Config send each request to ServeHTTP through an
// http.RoundTripper. The response, in Bedrock's wire format, comes back
// through a pipe to the real SDK client.
//
// It is for tests in a testing/synctest bubble. There, a goroutine waiting
// on a real socket is not durably blocked, so virtual time stands still. A
// client waiting on the pipe for a stalled model is durably blocked, and
// its deadlines fire in virtual time.
//
// URL names no host. Close does nothing but close the clients' idle
// connections; the loopback tests keep NewServer.
func NewInProcessServer(h Handler, optFns ...func(*Options)) *Server {
	s := newServer(h, optFns)
	s.URL = inProcessURL
	s.http = &http.Client{Transport: inProcess{s}}
	return s
}

// inProcess is the transport of an in-process Server. It serves each
// request on a goroutine of its own. It returns the response as soon as
// its header is written, the body following through a pipe.
type inProcess struct{ h http.Handler }

// RoundTrip serves r. The handler's context ends with r's or when the
// response body is closed, as a server's does when its client goes away.
// A handler that panics (http.ErrAbortHandler, say, for a connection cut)
// ends the body with io.ErrUnexpectedEOF, as a cut connection does.
func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(r.Context())
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, body: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			_ = recover()                // an abort or a panic cuts the connection, as net/http's server does
			w.WriteHeader(http.StatusOK) // a handler that wrote nothing: an empty 200
			_ = pw.CloseWithError(io.ErrUnexpectedEOF)
		}()
		t.h.ServeHTTP(w, r.WithContext(ctx))
		_ = pw.Close()
	}()
	select {
	case <-w.ready:
	case <-ctx.Done():
		cancel()
		_ = pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	return &http.Response{
		Status: http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.sent, Body: &pipeBody{pr, cancel}, ContentLength: -1, Request: r,
	}, nil
}

// pipeWriter is the http.ResponseWriter of an in-process request: the
// header is sent when written, the body goes through the pipe.
type pipeWriter struct {
	header http.Header
	body   *io.PipeWriter
	once   sync.Once
	ready  chan struct{} // closed when the header is written
	status int
	sent   http.Header // the header as written
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(status int) {
	w.once.Do(func() {
		w.status, w.sent = status, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

// Flush does nothing: each Write reaches the reader as it is made.
func (w *pipeWriter) Flush() {}

// pipeBody is an in-process response body: closing it ends the handler's
// context, as a client going away does.
type pipeBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *pipeBody) Close() error {
	b.cancel()
	return b.PipeReader.CloseWithError(errBodyClosed)
}

// errBodyClosed is what a handler's Write returns once its client closed
// the body.
var errBodyClosed = errors.New("bedrocktest: response body closed")
