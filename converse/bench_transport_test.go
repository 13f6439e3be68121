package converse_test

// The probes of the benchmarks: a transport that counts dials and stamps
// reads, and the process's memory and open files, watched while they run.

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
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

// benchOpenFiles counts the open file descriptors of the process, or
// returns -1 where /proc is missing.
func benchOpenFiles() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(fds)
}

// benchPeak is the most of each resource seen while a batch ran.
type benchPeak struct {
	goroutines int
	files      int    // -1 where /proc is missing
	memory     uint64 // heap objects and goroutine stacks, in bytes
}

// benchMemory reads the bytes of heap objects and of goroutine stacks,
// without stopping the world as runtime.ReadMemStats would.
func benchMemory() uint64 {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(samples)
	return samples[0].Value.Uint64() + samples[1].Value.Uint64()
}

// benchWatch samples the resources of the process every few milliseconds
// until stop is called, and returns the peaks.
func benchWatch() (stop func() benchPeak) {
	done := make(chan struct{})
	var p benchPeak
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			p.goroutines = max(p.goroutines, runtime.NumGoroutine())
			p.files = max(p.files, benchOpenFiles())
			p.memory = max(p.memory, benchMemory())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() benchPeak {
		close(done)
		wg.Wait()
		return p
	}
}

// benchHeap returns the live heap after two collections: the second
// empties the sync.Pools the first only moved aside.
func benchHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
