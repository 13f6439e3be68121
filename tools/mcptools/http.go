package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// httpTransport adds the server's headers to every request. It bounds the
// body of every response to a POST (the answers to our requests). It notes
// what went wrong on the wire in the exchange of the request's context,
// because the SDK keeps only a status's text and turns a body's read error
// into a message of its own. It sends nothing to an origin other than the
// server's: the headers, and the signature of a SigV4 in next, are the
// server's credentials.
type httpTransport struct {
	origin  string // of the server's URL
	headers map[string]string
	limit   int64 // bytes of a response body
	next    http.RoundTripper
}

func (h httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if o := origin(req.URL); o != h.origin {
		return nil, fmt.Errorf("mcptools: a request to %s, not to the server's origin %s: refused, with the server's credentials", o, h.origin)
	}
	if len(h.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range h.headers {
			req.Header.Set(k, v)
		}
	}
	next := h.next
	if next == nil {
		next = http.DefaultTransport
	}
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	resp, err := next.RoundTrip(req)
	if err != nil {
		ex.note(func(ex *exchange) { ex.cut = err })
		return nil, err
	}
	// A success clears a status: a 401 is followed by a retry, once
	// authorized.
	status := resp.Status
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		status = ""
	}
	ex.note(func(ex *exchange) { ex.status = status })
	if req.Method == http.MethodPost {
		resp.Body = &boundedBody{body: resp.Body, left: h.limit, limit: h.limit, ex: ex}
	}
	return resp, nil
}

// boundedBody is a response body that fails once it is longer than limit,
// so that a server's result is refused before it fills the memory.
type boundedBody struct {
	body        io.ReadCloser
	left, limit int64
	ex          *exchange
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	if int64(n) > b.left {
		b.ex.note(func(ex *exchange) { ex.tooLarge = b.limit })
		return int(b.left), fmt.Errorf("mcptools: the response is larger than %s", sizeText(b.limit))
	}
	b.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		b.ex.note(func(ex *exchange) { ex.cut = err })
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.body.Close() }

// exchange is what the HTTP transport saw of one call's (or handshake's,
// or listing's) requests, kept in its context.
type exchange struct {
	mu       sync.Mutex
	status   string // a status other than 2xx, such as "500 Internal Server Error"
	cut      error  // a request or a response body that failed on the wire
	tooLarge int64  // the limit a response body went over
	redirect string // the origin a refused redirect pointed to
	refused  string // why an authorization (Server.OAuth) failed
}

type exchangeKey struct{}

// watched returns ctx with a new exchange.
func watched(ctx context.Context) (context.Context, *exchange) {
	ex := new(exchange)
	return context.WithValue(ctx, exchangeKey{}, ex), ex
}

// note changes ex, if there is one (a request made outside a call has
// none), under its lock.
func (ex *exchange) note(change func(*exchange)) {
	if ex == nil {
		return
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	change(ex)
}

// failure says what went wrong on the wire, and which of ErrToolFailed
// (a response over the limit) and ErrUnavailable it is; "" if nothing did
// or the transport is not HTTP.
func (ex *exchange) failure() (string, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	switch {
	case ex.tooLarge > 0:
		return fmt.Sprintf("its response was larger than %s, the limit", sizeText(ex.tooLarge)), ErrToolFailed
	case ex.refused != "": // its status is a 401 or 403
		return "its authorization failed (" + ex.refused + ")", ErrUnavailable
	case ex.redirect != "": // its status is a 3xx
		return fmt.Sprintf("it redirected to %s: refused; streamable HTTP needs no redirects", ex.redirect), ErrUnavailable
	case ex.status != "":
		return "it answered HTTP " + ex.status, ErrUnavailable
	case ex.cut != nil:
		err := ex.cut
		var ue *url.Error
		if errors.As(err, &ue) { // "Post URL: " says nothing the server's name does not
			err = ue.Err
		}
		return fmt.Sprintf("the connection was cut (%v)", err), ErrUnavailable
	}
	return "", nil
}

// refuseRedirect is the CheckRedirect of the HTTP client of the server
// named name. It refuses every redirect: streamable HTTP needs none, and
// one to another origin would take the server's credentials there.
func refuseRedirect(name string) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, _ []*http.Request) error {
		to := origin(req.URL)
		ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
		ex.note(func(ex *exchange) { ex.redirect = to })
		return fmt.Errorf("mcptools: server %q redirected to %s: refused; streamable HTTP needs no redirects", name, to)
	}
}

// origin is u's scheme, host and port, in lower case and without the
// scheme's default port, so that two spellings of one origin are equal.
// Only the origin of a URL is shown: its path or query may hold a secret.
func origin(u *url.URL) string {
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if defaultPort := map[string]string{"http": "80", "https": "443"}[scheme]; port != "" && port != defaultPort {
		host += ":" + port
	}
	return scheme + "://" + host
}

// sizeText is n bytes in MiB when it is a whole number of them.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
