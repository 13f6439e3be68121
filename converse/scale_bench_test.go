package converse_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// benchPlotFile, set with -plot FILE after -args, makes BenchmarkScale draw
// its figures into a PNG (see bench_plot_test.go).
var benchPlotFile = flag.String("plot", "", "BenchmarkScale draws its figures into this PNG file")

// benchConcurrency are the numbers of concurrent conversations whose
// throughput BenchmarkScale measures. 32 is there to compare with the
// published figure BENCHMARKS.md cites.
var benchConcurrency = []int{1, 10, 32, 100, 1000}

// benchScaleFigures are BenchmarkScale's results, for the plot.
type benchScaleFigures struct {
	idleKB, activeKB float64
	convPerSec       map[int]float64
}

// BenchmarkScale measures a process holding many conversations, each a
// 2-turn tool exchange (two add calls, then the answer) through the real
// SDK client against bedrocktest on loopback, in the same process.
//
// An op is a conversation. Give -benchtime Nx with N in the thousands:
// the memory figures are shares of N conversations held at once, and with
// fewer than c ops, fewer than c run at once.
//
//   - state=idle: the live heap a conversation holds once its exchange is
//     over (KB/conv).
//   - state=active: the live heap and goroutine stacks of a conversation
//     in flight, with all N blocked in a tool behind a gate (KB/conv,
//     goroutines/conv).
//   - concurrent=c: c conversations at a time, each worker starting the
//     next as one ends, through one client whose transport keeps c idle
//     connections (conv/s; cpu-ns/op, the process's CPU time, server
//     included, a conversation, which a busy machine inflates less).
//
// It fails if a conversation does not complete or, after a throughput
// run, a goroutine outlives the server; never on time.
func BenchmarkScale(b *testing.B) {
	reg := benchRegistry(b)
	fig := benchScaleFigures{convPerSec: map[int]float64{}}
	b.Run("state=idle", func(b *testing.B) { fig.idleKB = benchIdle(b, reg) })
	b.Run("state=active", func(b *testing.B) { fig.activeKB = benchActive(b) })
	for _, c := range benchConcurrency {
		b.Run(fmt.Sprintf("concurrent=%d", c), func(b *testing.B) {
			fig.convPerSec[c] = benchThroughput(b, reg, c)
		})
	}
	if *benchPlotFile != "" {
		if err := writeBenchPlot(*benchPlotFile, fig); err != nil {
			b.Fatal(err)
		}
	}
}

// benchScaleServer is a bedrocktest server for the scale figures: it keeps
// no requests, so that its own memory does not grow with the runs.
func benchScaleServer(h bedrocktest.Handler) *bedrocktest.Server {
	return bedrocktest.NewServer(h, func(o *bedrocktest.Options) { o.MaxRequests = 0 })
}

// benchLive returns the bytes of live heap objects and goroutine stacks
// after two collections (the second empties the sync.Pools the first only
// moved aside).
func benchLive() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// benchIdle reports and returns the KB of live heap a finished conversation
// holds. That is the heap with all of them, less the heap once they are
// dropped, so that the server, the client and its connections cancel out.
func benchIdle(b *testing.B, reg *tools.Registry) float64 {
	srv := benchScaleServer(benchModel(1))
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()
	var convs []*converse.Conversation
	for b.Loop() {
		c := converse.New(client, benchModelID, reg)
		if _, err := c.Send(ctx, "Add things."); err != nil {
			b.Fatal(err)
		}
		convs = append(convs, c)
	}
	with := benchLive()
	runtime.KeepAlive(convs)
	convs = nil
	held := with - min(with, benchLive())
	kb := float64(held) / 1024 / float64(b.N)
	b.ReportMetric(kb, "KB/conv")
	return kb
}

// benchActive reports and returns the KB of live heap and stacks a
// conversation in flight holds. Each op starts one and waits until it is in
// its tool call, where it stays until all have been measured. The transport's
// idle connections are closed before measuring: they are the server's and the
// pool's, not the conversations'.
func benchActive(b *testing.B) float64 {
	gate := make(chan struct{})
	entered := make(chan struct{})
	block, err := tools.New("block", "Waits for the benchmark's gate.", func(ctx context.Context, in benchArgs) (int, error) {
		entered <- struct{}{}
		<-gate
		return in.A + in.B, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := tools.NewRegistry(block)
	if err != nil {
		b.Fatal(err)
	}
	srv := benchScaleServer(benchModelCalling(1, benchCalls("block", 1)))
	defer srv.Close()
	transport := newBenchTransport(2)
	defer transport.base.CloseIdleConnections()
	client := transport.client(srv)
	ctx := context.Background()
	var wg sync.WaitGroup
	var failed atomic.Int64
	base, goroutines := benchLive(), runtime.NumGoroutine()
	for b.Loop() {
		wg.Go(func() {
			if _, err := converse.New(client, benchModelID, reg).Send(ctx, "Wait."); err != nil {
				failed.Add(1)
			}
		})
		<-entered
	}
	transport.base.CloseIdleConnections()
	benchSettle()
	live, running := benchLive(), runtime.NumGoroutine()
	close(gate)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d conversations failed", n, b.N)
	}
	kb := float64(live-min(live, base)) / 1024 / float64(b.N)
	b.ReportMetric(kb, "KB/conv")
	b.ReportMetric(float64(running-goroutines)/float64(b.N), "goroutines/conv")
	return kb
}

// benchSettle waits until the number of goroutines has stopped changing
// for 10 ms, or for a second at most: the server's goroutines of the
// connections just closed take a moment to end.
func benchSettle() {
	last := runtime.NumGoroutine()
	for range 100 {
		time.Sleep(10 * time.Millisecond)
		now := runtime.NumGoroutine()
		if now == last {
			return
		}
		last = now
	}
}

// benchThroughput reports and returns the conversations a second that c
// workers complete, each starting a conversation as its last one ends.
func benchThroughput(b *testing.B, reg *tools.Registry, c int) float64 {
	leaks := goleak.IgnoreCurrent()
	srv := benchScaleServer(benchModel(1))
	transport := newBenchTransport(c)
	client := transport.client(srv)
	ctx := context.Background()
	var next atomic.Int64
	errs := make([]error, min(c, b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu, start := benchCPU(), time.Now()
	for w := range errs {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) && errs[w] == nil {
				_, errs[w] = converse.New(client, benchModelID, reg).Send(ctx, "Add things.")
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	benchReportCPU(b, cpu)
	b.StopTimer()
	srv.Close()
	transport.base.CloseIdleConnections()
	if err := errors.Join(errs...); err != nil {
		b.Fatalf("not every conversation completed: %v", err)
	}
	if err := goleak.Find(leaks); err != nil {
		b.Fatalf("goroutines left behind: %v", err)
	}
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "conv/s")
	b.ReportMetric(float64(transport.dials.Load())/float64(b.N), "dials/op")
	return rate
}
