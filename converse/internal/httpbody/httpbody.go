// Package httpbody works around a trap of the SDK's HTTP stack on fast
// connections. The SDK closes a request body as soon as the response
// starts. A transport still copying that body through io.WriterTo then
// drops the connection ("use of closed network connection"). On loopback a
// ConverseStream call fails that way now and then: 7% of the runs of the
// README's example (all streamed) on a busy machine. Hiding io.WriterTo, so
// that the transport copies the body with Read, avoids it; Read and Close
// are all a transport needs.
package httpbody

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Client returns an aws.HTTPClient that sends requests with next (nil
// means the SDK's default, awshttp.NewBuildableClient), their bodies
// reduced to Read and Close.
func Client(next aws.HTTPClient) aws.HTTPClient {
	if next == nil {
		next = awshttp.NewBuildableClient()
	}
	return client{next}
}

// Transport returns an http.RoundTripper that sends requests with base,
// their bodies reduced to Read and Close. It passes CloseIdleConnections on
// to base.
func Transport(base *http.Transport) http.RoundTripper {
	return transport{base}
}

type client struct{ next aws.HTTPClient }

func (c client) Do(r *http.Request) (*http.Response, error) {
	return c.next.Do(plain(r))
}

type transport struct{ base *http.Transport }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	return t.base.RoundTrip(plain(r))
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the base.
func (t transport) CloseIdleConnections() {
	t.base.CloseIdleConnections()
}

type plainBody struct{ io.ReadCloser }

// plain returns r, or a shallow copy of it with its body behind plainBody.
func plain(r *http.Request) *http.Request {
	if r.Body == nil || r.Body == http.NoBody {
		return r
	}
	r = r.Clone(r.Context())
	r.Body = plainBody{r.Body}
	return r
}
