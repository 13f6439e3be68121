package converse_test

// The deadlines, retries and hedging of Options.ModelCalls, in virtual
// time: bedrocktest's in-process server lets a synctest bubble run a
// minute's stall in no time, the SDK's real client and wire format
// between.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/tools"
)

// inProcess is a client of an in-process bedrocktest server answering with
// h, for a synctest bubble.
func inProcess(h bedrocktest.Handler) (*bedrocktest.Server, *bedrockruntime.Client) {
	srv := bedrocktest.NewInProcessServer(h)
	return srv, srv.Client()
}

// events collects a conversation's events.
type events struct {
	mu  sync.Mutex
	all []converse.Event
}

func (e *events) options(o *converse.Options) {
	o.OnEvent = func(ev converse.Event) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.all = append(e.all, ev)
	}
}

// of returns the events of type T.
func of[T converse.Event](e *events) []T {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []T
	for _, ev := range e.all {
		if v, ok := ev.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// slow is a text reply that comes after latency.
func slow(text string, latency time.Duration) *bedrocktest.Reply {
	r := bedrocktest.Text(text)
	r.Latency = latency
	return r
}

// policy sets Options.ModelCalls to p.
func policy(p *converse.CallPolicy) func(*converse.Options) {
	return func(o *converse.Options) { o.ModelCalls = p }
}

// TestFirstTokenDeadline: a call with no first token (a stream's first event,
// a Converse answer) by FirstToken is cancelled, classified as stalled and
// made again, which answers. Without a policy the call waits for the model.
func TestFirstTokenDeadline(t *testing.T) {
	for name, stream := range map[string]bool{"Converse": false, "ConverseStream": true} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, client := inProcess(bedrocktest.Script(slow("Late.", time.Minute), slow("On time.", time.Second)))
				defer srv.Close()
				var ev events
				start := time.Now()
				res, err := converse.New(client, claude, nil, ev.options,
					policy(&converse.CallPolicy{FirstToken: 5 * time.Second, Backoff: time.Second}),
					func(o *converse.Options) {
						if stream {
							streaming(o)
						}
					}).Send(context.Background(), "Hi")

				require.NoError(t, err)
				assert.Equal(t, "On time.", res.Text)
				retries := of[converse.ModelRetry](&ev)
				require.Len(t, retries, 1)
				assert.ErrorIs(t, retries[0].Err, converse.ErrStalled)
				assert.Equal(t, converse.OutcomeRetry, converse.Classify(retries[0].Err))
				assert.Equal(t, 1, retries[0].Retry)
				assert.Equal(t, 5*time.Second+retries[0].Wait+time.Second, time.Since(start),
					"the stall is cut at the deadline, not at the model's minute")
				assert.Len(t, srv.Requests(), 2)
			})
		})
	}
}

// TestNoPolicyWaitsForTheModel: without Options.ModelCalls, a slow model
// is waited for, as before.
func TestNoPolicyWaitsForTheModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, client := inProcess(bedrocktest.Script(slow("Late.", time.Minute)))
		defer srv.Close()
		start := time.Now()
		res, err := converse.New(client, claude, nil, streaming).Send(context.Background(), "Hi")
		require.NoError(t, err)
		assert.Equal(t, "Late.", res.Text)
		assert.Equal(t, time.Minute, time.Since(start))
	})
}

// TestIdleDeadline: a stream silent for longer than Idle after its first
// content is cancelled and made again; the text it showed is reported as
// superseded.
func TestIdleDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stalls := bedrocktest.Text("Hello there, this will stop.")
		stalls.StallAfter = 4 // messageStart, three text deltas (a text block has no contentBlockStart)
		stalls.Interval = time.Second
		srv, client := inProcess(bedrocktest.Script(stalls, bedrocktest.Text("Hello again.")))
		defer srv.Close()
		var ev events
		start := time.Now()
		res, err := converse.New(client, claude, nil, streaming, ev.options,
			policy(&converse.CallPolicy{FirstToken: time.Minute, Idle: 10 * time.Second})).Send(context.Background(), "Hi")

		require.NoError(t, err)
		assert.Equal(t, "Hello again.", res.Text)
		retries := of[converse.ModelRetry](&ev)
		require.Len(t, retries, 1)
		assert.ErrorIs(t, retries[0].Err, converse.ErrStalled)
		assert.Contains(t, retries[0].Err.Error(), "no event for 10s")
		assert.Equal(t, "Hello there,", retries[0].Superseded, "the three deltas shown")
		assert.Equal(t, 3*time.Second+10*time.Second+retries[0].Wait, time.Since(start),
			"three events a second apart, then ten seconds of silence")
	})
}

// TestCutStreamIsRetried: a stream cut by its connection before any tool
// of its turn started is made again; without a policy it fails the Send.
func TestCutStreamIsRetried(t *testing.T) {
	for name, p := range map[string]*converse.CallPolicy{"policy": {}, "none": nil} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cut := bedrocktest.Text("Cut short, this answer.")
				cut.CutAfter = 3
				srv, client := inProcess(bedrocktest.Script(cut, bedrocktest.Text("Whole.")))
				defer srv.Close()
				res, err := converse.New(client, claude, nil, streaming, policy(p)).Send(context.Background(), "Hi")
				if p == nil {
					require.ErrorIs(t, err, converse.ErrStreamTruncated)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, "Whole.", res.Text)
			})
		})
	}
}

// TestRetriesAreBoundedThenFallBack: a model that always stalls is asked
// 1+Retries times, then the fallback model answers; without a fallback
// the Send fails with ErrStalled, a retryable outcome.
func TestRetriesAreBoundedThenFallBack(t *testing.T) {
	for name, fallback := range map[string][]string{"fallback": {haiku}, "none": nil} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				stalled := bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
					if *req.ModelId == haiku {
						return bedrocktest.Text("From the fallback."), nil
					}
					return slow("Never in time.", time.Hour), nil
				})
				srv, client := inProcess(stalled)
				defer srv.Close()
				var ev events
				res, err := converse.New(client, claude, nil, streaming, ev.options,
					policy(&converse.CallPolicy{FirstToken: time.Second, Retries: 3, Fallback: fallback})).Send(context.Background(), "Hi")

				assert.Len(t, of[converse.ModelRetry](&ev), 3)
				if fallback == nil {
					require.ErrorIs(t, err, converse.ErrStalled)
					assert.Equal(t, converse.OutcomeRetry, converse.Classify(err))
					assert.Len(t, srv.Requests(), 4)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, "From the fallback.", res.Text)
				require.Len(t, of[converse.ModelFallback](&ev), 1)
				assert.ErrorIs(t, of[converse.ModelFallback](&ev)[0].Err, converse.ErrStalled)
				assert.Len(t, srv.Requests(), 5)
			})
		})
	}
}

// TestNoRetryOnceAToolStarted: with EarlyToolStart, a stream that stalls
// after a speculative call started is not retried, nor sent to a
// fallback: the turn is interrupted, as without a policy, and Resume
// continues it.
func TestNoRetryOnceAToolStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ran atomic.Int32
		reply := bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}})
		reply.Chunk = 100    // the input in one delta
		reply.StallAfter = 4 // messageStart, the call's block (start, delta, stop), then silence
		srv, client := inProcess(bedrocktest.Script(reply, bedrocktest.Text("Resumed.")))
		defer srv.Close()
		var ev events
		conv := converse.New(client, claude, countingCalculator(t, &ran), ev.options,
			func(o *converse.Options) { o.Stream = &converse.StreamPolicy{EarlyToolStart: true} },
			policy(&converse.CallPolicy{Idle: 10 * time.Second, Fallback: []string{haiku}}))
		_, err := conv.Send(context.Background(), "Add")
		require.ErrorIs(t, err, converse.ErrStalled)
		assert.Equal(t, int32(1), ran.Load(), "the call ran while the stream was silent")
		assert.Empty(t, of[converse.ModelRetry](&ev))
		assert.Empty(t, of[converse.ModelFallback](&ev))
		assert.Len(t, srv.Requests(), 1)

		res, err := conv.Resume(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "Resumed.", res.Text)
	})
}

// TestHedgeCancelsTheLoser: once the policy knows twenty first-token times of
// a second, a call without its first token at the quantile's second is sent
// again. The second request answers first and the first is cancelled at that
// moment.
func TestHedgeCancelsTheLoser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		var lostAt time.Time
		lost := make(chan struct{})
		h := bedrocktest.HandlerFunc(func(ctx context.Context, _ *bedrocktest.Request) (*bedrocktest.Reply, error) {
			switch calls.Add(1) {
			case 21: // the call to hedge: it never answers
				<-ctx.Done()
				lostAt = time.Now()
				close(lost)
				return nil, ctx.Err()
			case 22:
				return slow("The hedge.", time.Second), nil
			}
			return slow("Warm-up.", time.Second), nil
		})
		srv, client := inProcess(h)
		defer srv.Close()
		p := &converse.CallPolicy{Hedge: 0.9}
		for range 20 {
			_, err := converse.New(client, claude, nil, streaming, policy(p)).Send(context.Background(), "Hi")
			require.NoError(t, err)
		}
		var ev events
		start := time.Now()
		res, err := converse.New(client, claude, nil, streaming, ev.options, policy(p)).Send(context.Background(), "Hi")
		require.NoError(t, err)
		assert.Equal(t, "The hedge.", res.Text)
		hedged := of[converse.Hedged](&ev)
		require.Len(t, hedged, 1)
		assert.Equal(t, time.Second, hedged[0].After)
		assert.Equal(t, 2*time.Second, time.Since(start), "the hedge's second, then its answer's")
		<-lost
		assert.Equal(t, start.Add(2*time.Second), lostAt, "the loser is cancelled when the hedge answers")
		assert.Equal(t, int32(22), calls.Load())
	})
}

// TestStallErrorType: a stalled call's chat span has error.type stalled.
func TestStallErrorType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, client := inProcess(bedrocktest.Script(slow("Late.", time.Minute)))
		defer srv.Close()
		tr := newTraced(t)
		_, err := converse.New(client, claude, nil, streaming, tr.options,
			policy(&converse.CallPolicy{FirstToken: time.Second, Retries: -1})).Send(context.Background(), "Hi")

		require.True(t, errors.Is(err, converse.ErrStalled), "%v", err)
		chat := tr.named("chat " + claude)
		require.Len(t, chat, 1)
		assert.Equal(t, "stalled", attrs(chat[0])["error.type"].AsString())
	})
}

// TestHedgeWinnerKeepsItsEarlyCalls: with EarlyToolStart, the calls the
// hedge's winning request started while it streamed run on after its
// stream ends, until their tool round is over.
func TestHedgeWinnerKeepsItsEarlyCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		h := bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
			switch n := calls.Add(1); {
			case n == 21: // the call to hedge: it never answers
				<-ctx.Done()
				return nil, ctx.Err()
			case n == 22:
				r := bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "slow", Input: map[string]any{}})
				r.Latency = time.Second
				return r, nil
			case n > 22:
				return bedrocktest.Text("Done."), nil
			}
			return slow("Warm-up.", time.Second), nil
		})
		srv, client := inProcess(h)
		defer srv.Close()
		p := &converse.CallPolicy{Hedge: 0.9}
		for range 20 {
			_, err := converse.New(client, claude, nil, streaming, policy(p)).Send(context.Background(), "Hi")
			require.NoError(t, err)
		}
		slowTool, err := tools.New("slow", "Takes ten seconds.", func(ctx context.Context, _ struct{}) (string, error) {
			time.Sleep(10 * time.Second)
			return "finished", ctx.Err()
		}, func(o *tools.Options) { o.Speculative = true })
		require.NoError(t, err)
		reg, err := tools.NewRegistry(slowTool)
		require.NoError(t, err)
		var ev events
		res, err := converse.New(client, claude, reg, ev.options, policy(p),
			func(o *converse.Options) { o.Stream = &converse.StreamPolicy{EarlyToolStart: true} }).Send(context.Background(), "Go")

		require.NoError(t, err)
		assert.Equal(t, "Done.", res.Text)
		require.Len(t, of[converse.Hedged](&ev), 1)
		ends := of[converse.ToolEnd](&ev)
		require.Len(t, ends, 1)
		assert.NoError(t, ends[0].Err, "the early call was not cancelled with its stream")
		assert.JSONEq(t, `"finished"`, string(ends[0].Output))
	})
}

// TestEngineCallsKeepTheDeadlines: an engine's model calls (Conversation's
// Converse and ConverseStream, CallModel) fail with ErrStalled at the
// policy's deadline, and are not retried: the engine retries by Classify.
func TestEngineCallsKeepTheDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := slow("Late.", time.Minute)
		srv, client := inProcess(bedrocktest.Script(late, late, late))
		defer srv.Close()
		p := policy(&converse.CallPolicy{FirstToken: time.Second})
		conv := converse.New(client, claude, nil, p)
		step, err := conv.Begin(context.Background(), types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}})
		require.NoError(t, err)
		calls := map[string]func() error{
			"Converse": func() error { _, err := conv.Converse(context.Background(), step.ModelCall.Input); return err },
			"ConverseStream": func() error {
				_, err := conv.ConverseStream(context.Background(), step.ModelCall.StreamInput())
				return err
			},
			"CallModel": func() error {
				_, err := converse.CallModel(context.Background(), client, step.ModelCall.Input, p)
				return err
			},
		}
		for name, call := range calls {
			start := time.Now()
			err := call()
			assert.ErrorIs(t, err, converse.ErrStalled, name)
			assert.Equal(t, time.Second, time.Since(start), name)
		}
		assert.Len(t, srv.Requests(), 3, "one request each")
	})
}

// TestRecordedStallReplays: a stream that stalled after its first event,
// then was made again by the Idle deadline, or lost to a hedge, is recorded
// with the attempt that answered. Replayed with the same ModelCalls, the
// early-ended stream is made again, so the replay gives the live answer and
// uses every exchange; without ModelCalls it fails as truncated.
func TestRecordedStallReplays(t *testing.T) {
	for name, p := range map[string]*converse.CallPolicy{
		"idle":  {Idle: 5 * time.Second},
		"hedge": {Hedge: 0.9},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				warmUp := 0
				if p.Hedge > 0 {
					warmUp = 20 // first-token times for the hedge's quantile
				}
				srv := bedrocktest.NewInProcessServer(bedrocktest.HandlerFunc(func(context.Context, *bedrocktest.Request) (*bedrocktest.Reply, error) {
					if int(calls.Add(1)) == warmUp+1 {
						stalled := slow("Stalls after its first event.", time.Second)
						stalled.StallAfter = 1
						return stalled, nil
					}
					return slow("Answered.", time.Second), nil
				}))
				defer srv.Close()
				for range warmUp {
					_, err := converse.New(srv.Client(), claude, nil, streaming, policy(p)).Send(context.Background(), "Hi")
					require.NoError(t, err)
				}
				r := recording.NewRecorder(srv.HTTPClient())
				res, err := converse.New(srv.Client(func(o *bedrockruntime.Options) { o.HTTPClient = r }), claude, nil, streaming, policy(p)).Send(context.Background(), "Hi")
				require.NoError(t, err)
				require.Equal(t, "Answered.", res.Text)
				rec := r.Recording()
				require.Len(t, rec.Exchanges, 2)
				assert.Len(t, rec.Exchanges[0].Events, 1, "the stalled attempt, with the event read before it stalled")

				replay := recording.NewReplayer(rec)
				res, err = converse.New(replay.Client(), claude, nil, streaming, policy(p)).Send(context.Background(), "Hi")
				require.NoError(t, err)
				assert.Equal(t, "Answered.", res.Text)
				assert.NoError(t, replay.Unused())

				_, err = converse.New(recording.NewReplayer(rec).Client(), claude, nil, streaming).Send(context.Background(), "Hi")
				assert.ErrorIs(t, err, converse.ErrStreamTruncated)
			})
		})
	}
}
