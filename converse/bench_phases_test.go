package converse_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// BenchmarkConversationPhases is BenchmarkConversation's conversation cut
// where its time goes, from stamps its client's transport takes: each
// request's start, its response's headers, and its body's end. It reports the
// median over the conversations, in µs, of
//
//   - before: from Send to the first request (the SDK's request building
//     included);
//   - answer: from each request to its response's headers (transport and
//     server), summed over the turns;
//   - read: from each response's headers to its body's end (the stream, or
//     the Converse body), summed;
//   - between: from a response's end to the next request (assembling the
//     reply, running the tools, building the request), summed;
//   - after: from the last response's end to Send's return.
//
// Between, before and after are the client's own time; answer and read,
// the time it waits on the server, which a client's work on the other P can
// slow too.
func BenchmarkConversationPhases(b *testing.B) {
	srv := bedrocktest.NewServer(benchModel(2))
	defer srv.Close()
	cfg := srv.Config()
	rec := &phaseRecorder{base: cfg.HTTPClient.(*http.Client).Transport}
	cfg.HTTPClient = &http.Client{Transport: rec}
	client := bedrockruntime.NewFromConfig(cfg)
	reg := benchRegistry(b)
	ctx := context.Background()
	for _, stream := range []bool{false, true} {
		for _, impl := range []string{"guarded", "library"} {
			b.Run(fmt.Sprintf("turns=3/stream=%t/impl=%s", stream, impl), func(b *testing.B) {
				var phases [5][]float64 // before, answer, read, between, after
				for b.Loop() {
					chat := newBenchChatStreamed(b, impl, stream, client, reg)
					rec.reset()
					start := time.Now()
					if err := chat.Send(ctx, "Add things."); err != nil {
						b.Fatal(err)
					}
					for i, d := range rec.phases(start, time.Now()) {
						phases[i] = append(phases[i], d)
					}
				}
				for i, unit := range []string{"µs-before", "µs-answer", "µs-read", "µs-between", "µs-after"} {
					b.ReportMetric(median(phases[i]), unit)
				}
			})
		}
	}
}

// phaseRecorder is a transport that stamps, for each request of a
// conversation, its start, its response's headers and its body's end.
type phaseRecorder struct {
	base  http.RoundTripper
	mu    sync.Mutex
	marks [][3]time.Time // by request: start, headers, end of body
}

func (r *phaseRecorder) reset() {
	r.mu.Lock()
	r.marks = r.marks[:0]
	r.mu.Unlock()
}

func (r *phaseRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.marks = append(r.marks, [3]time.Time{start, time.Now()})
	i := len(r.marks) - 1
	r.mu.Unlock()
	resp.Body = &phaseBody{ReadCloser: resp.Body, end: func() {
		r.mu.Lock()
		r.marks[i][2] = time.Now()
		r.mu.Unlock()
	}}
	return resp, nil
}

// phases cuts the conversation from start to end by the marks, in µs:
// before, answer, read, between, after.
func (r *phaseRecorder) phases(start, end time.Time) [5]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	µs := func(from, to time.Time) float64 { return float64(to.Sub(from).Nanoseconds()) / 1e3 }
	var p [5]float64
	last := start
	for i, m := range r.marks {
		if i == 0 {
			p[0] = µs(start, m[0])
		} else {
			p[3] += µs(last, m[0])
		}
		p[1] += µs(m[0], m[1])
		p[2] += µs(m[1], m[2])
		last = m[2]
	}
	p[4] = µs(last, end)
	return p
}

// phaseBody calls end once, when its body is read to its end or, if the
// SDK stops reading before, closed.
type phaseBody struct {
	io.ReadCloser
	end  func()
	done bool
}

func (b *phaseBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.ended()
	}
	return n, err
}

func (b *phaseBody) Close() error {
	b.ended()
	return b.ReadCloser.Close()
}

func (b *phaseBody) ended() {
	if !b.done {
		b.done = true
		b.end()
	}
}

// median is the middle of v, which it sorts.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}
