package converse_test

// The probe of the benchmarks: a transport that counts dials and stamps
// reads.

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// benchTransport is the transport of bedrocktest's client (a clone of
// http.DefaultTransport) with probes: it counts the connections it dials and
// stamps the time of the last read from any of them.
type benchTransport struct {
	base     *http.Transport
	dials    atomic.Int64
	lastRead atomic.Int64 // time.Since(benchEpoch), in ns
}

var benchEpoch = time.Now()

func newBenchTransport(maxIdleConnsPerHost int) *benchTransport {
	t := &benchTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	t.base.MaxIdleConns = 0 // no limit across hosts: MaxIdleConnsPerHost decides
	t.base.MaxIdleConnsPerHost = maxIdleConnsPerHost
	var dialer net.Dialer
	t.base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		t.dials.Add(1)
		return benchStampedConn{conn, &t.lastRead}, nil
	}
	return t
}

// RoundTrip hides io.WriterTo on request bodies, as bedrocktest's own client
// does (see bedrocktest.Server.HTTPClient).
func (t *benchTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r = r.Clone(r.Context())
		r.Body = struct{ io.ReadCloser }{r.Body}
	}
	return t.base.RoundTrip(r)
}

// client returns a real SDK client for srv that uses t.
func (t *benchTransport) client(srv *bedrocktest.Server) *bedrockruntime.Client {
	cfg := srv.Config()
	cfg.HTTPClient = &http.Client{Transport: t}
	return bedrockruntime.NewFromConfig(cfg)
}

type benchStampedConn struct {
	net.Conn
	last *atomic.Int64
}

func (c benchStampedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.last.Store(int64(time.Since(benchEpoch)))
	}
	return n, err
}
