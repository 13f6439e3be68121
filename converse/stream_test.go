package converse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/converse/wirejson"
	"github.com/tooluse/bedrock/tools"
)

func streaming(o *converse.Options) { o.Stream = &converse.StreamPolicy{} }

// streamIf is a StreamPolicy when stream is set: Options.Stream streams.
func streamIf(stream bool) *converse.StreamPolicy {
	if !stream {
		return nil
	}
	return &converse.StreamPolicy{}
}

// reasoningReply is a turn with signed reasoning, text and two tool calls.
func reasoningReply() *bedrocktest.Reply {
	return bedrocktest.Output(types.StopReasonToolUse,
		&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: types.ReasoningTextBlock{
			Text: aws.String("The user wants two sums; I can run both at once."), Signature: aws.String("EqQBCkgIARABGAIiQL1signature=="),
		}}},
		text("I'll add both pairs."),
		&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("AB3"), Name: aws.String("calculator"),
			Input: documentOf(map[string]any{"a": 10, "b": 10})}},
		&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("PO9"), Name: aws.String("calculator"),
			Input: documentOf(map[string]any{"a": 30, "b": 30, "operation": "add"})}},
	)
}

// TestStreamAssemblesWhatConverseReturns runs one script with Converse and
// with ConverseStream (text and tool input in 3-rune deltas): the histories
// must be the same on the wire.
func TestStreamAssemblesWhatConverseReturns(t *testing.T) {
	history := func(opt func(*converse.Options)) ([]byte, []*bedrocktest.Request) {
		first := reasoningReply()
		first.Chunk = 3
		srv, client := serve(t, bedrocktest.Script(first, bedrocktest.Text("Both are done: 20 and 60.")))
		res, err := converse.New(client, claude, calculator(t), opt).Send(context.Background(), "10+10 and 30+30?")
		require.NoError(t, err)
		assert.Equal(t, "Both are done: 20 and 60.", res.Text)
		assert.Equal(t, 2, res.Turns)
		assert.Equal(t, 30, res.Usage.TotalTokens)
		b, err := wirejson.MarshalMessages(res.History)
		require.NoError(t, err)
		return b, srv.Requests()
	}
	plain, _ := history(func(*converse.Options) {})
	streamed, reqs := history(streaming)
	assert.JSONEq(t, string(plain), string(streamed))
	assert.Equal(t, recording.OpConverseStream, reqs[0].Operation)
	// The reasoning block, with its signature, went back unchanged.
	reasoning := reqs[1].Messages[1].Content[0].(*types.ContentBlockMemberReasoningContent)
	rt := reasoning.Value.(*types.ReasoningContentBlockMemberReasoningText).Value
	assert.Equal(t, "EqQBCkgIARABGAIiQL1signature==", aws.ToString(rt.Signature))
	got := map[string]string{}
	for _, r := range resultsOf(t, reqs[1].Messages[2]) {
		got[r.ID] = r.Text
	}
	assert.Equal(t, map[string]string{"AB3": "20", "PO9": "60"}, got)
}

// TestStreamAssemblesAGeneratedImage streams a reply with an image the
// model generated, its bytes in three deltas, and one it failed to make:
// both are kept whole, as Converse returns them, not dropped as empty text
// blocks.
func TestStreamAssemblesAGeneratedImage(t *testing.T) {
	png := bytes.Repeat([]byte("\x89PNG"), 2500) // 10,000 bytes
	history := func(opt func(*converse.Options)) []types.Message {
		srv, client := serve(t, bedrocktest.Script(bedrocktest.Output(types.StopReasonEndTurn,
			text("Here it is."),
			&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng,
				Source: &types.ImageSourceMemberBytes{Value: png}}},
			&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatJpeg,
				Error: &types.ErrorBlock{Message: aws.String("the second image could not be made")}}},
		)))
		res, err := converse.New(client, claude, calculator(t), opt).Send(context.Background(), "Draw it.")
		require.NoError(t, err)
		assert.Equal(t, "Here it is.", res.Text)
		assert.Len(t, srv.Requests(), 1)
		return res.History
	}
	plain, streamed := history(func(*converse.Options) {}), history(streaming)
	require.Len(t, streamed, 2)
	require.Len(t, streamed[1].Content, 3)
	img, ok := streamed[1].Content[1].(*types.ContentBlockMemberImage)
	require.True(t, ok, "the image block is kept, not %T", streamed[1].Content[1])
	assert.Equal(t, types.ImageFormatPng, img.Value.Format)
	assert.Equal(t, png, img.Value.Source.(*types.ImageSourceMemberBytes).Value)
	a, err := wirejson.MarshalMessages(plain)
	require.NoError(t, err)
	b, err := wirejson.MarshalMessages(streamed)
	require.NoError(t, err)
	assert.JSONEq(t, string(a), string(b))
}

func TestStreamTextDeltasArriveAsGenerated(t *testing.T) {
	reply := bedrocktest.Text("Streaming text arrives piece by piece, long before the turn ends.")
	reply.Chunk = 8
	_, client := serve(t, bedrocktest.Script(reply))
	var deltas []string
	res, err := converse.New(client, claude, nil, streaming, func(o *converse.Options) {
		o.OnEvent = func(ev converse.Event) {
			if tx, ok := ev.(converse.Text); ok {
				deltas = append(deltas, tx.Text)
			}
		}
	}).Send(context.Background(), "Hi")

	require.NoError(t, err)
	assert.Greater(t, len(deltas), 5)
	assert.Equal(t, res.Text, fmt.Sprint(joined(deltas)))

	// A stream that stalls after its first deltas: they reach OnEvent
	// though the turn has not ended, and the test then cancels.
	slow := bedrocktest.Text("Streaming text arrives piece by piece, long before the turn ends.")
	slow.Chunk = 8
	slow.StallAfter = 3
	_, client = serve(t, bedrocktest.Script(slow))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		_, err := converse.New(client, claude, nil, streaming, func(o *converse.Options) {
			o.OnEvent = func(ev converse.Event) {
				if tx, ok := ev.(converse.Text); ok {
					select {
					case first <- tx.Text:
					default:
					}
				}
			}
		}).Send(ctx, "Hi")

		done <- err
	}()
	select {
	case text := <-first:
		assert.NotEmpty(t, text)
	case err := <-done:
		t.Fatalf("the turn ended before its first delta was seen: %v", err)
	case <-time.After(30 * time.Second): // a failsafe: the stalled turn never ends
		t.Fatal("no delta reached OnEvent while the stream was still going")
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

func joined(parts []string) string {
	s := ""
	for _, p := range parts {
		s += p
	}
	return s
}

func TestStreamTruncatedNeverRunsTools(t *testing.T) {
	tests := []struct {
		name  string
		shape func(*bedrocktest.Reply)
	}{
		{"cut mid-frame", func(r *bedrocktest.Reply) { r.CutAfter = 6 }},
		{"cut after the last tool block", func(r *bedrocktest.Reply) { r.DropMessageStop = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply := bedrocktest.ToolUse("Adding.", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}})
			tt.shape(reply)
			_, client := serve(t, bedrocktest.Script(reply))
			var ran atomic.Int32
			c := converse.New(client, claude, countingCalculator(t, &ran), streaming)
			_, err := c.Send(context.Background(), "1+2?")
			require.ErrorIs(t, err, converse.ErrStreamTruncated)
			assert.Contains(t, err.Error(), "converse: turn 1: ")
			assert.Zero(t, ran.Load(), "no tool call from a truncated turn")
			assert.Len(t, c.History(), 1, "only the prompt is kept")
		})
	}
}

func countingCalculator(t *testing.T, ran *atomic.Int32) *tools.Registry {
	t.Helper()
	calc, err := tools.New("calculator", "Adds.", func(_ context.Context, in addIn) (float64, error) {
		ran.Add(1)
		return in.A + in.B, nil
	}, func(o *tools.Options) { o.Speculative = true })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(calc)
	require.NoError(t, err)
	return reg
}

func TestStreamExceptionsAreTyped(t *testing.T) {
	tests := []struct {
		exception string
		target    any
	}{
		{"modelStreamErrorException", new(*types.ModelStreamErrorException)},
		{"throttlingException", new(*types.ThrottlingException)},
		{"internalServerException", new(*types.InternalServerException)},
		{"serviceUnavailableException", new(*types.ServiceUnavailableException)},
		{"validationException", new(*types.ValidationException)},
	}
	for _, tt := range tests {
		t.Run(tt.exception, func(t *testing.T) {
			reply := bedrocktest.Text("This answer will be interrupted.")
			reply.Exception = &bedrocktest.Exception{Type: tt.exception, Message: "boom"}
			reply.ExceptionAfter = 3
			_, client := serve(t, bedrocktest.Script(reply))
			_, err := converse.New(client, claude, nil, streaming).Send(context.Background(), "Hi")
			require.Error(t, err)
			assert.True(t, errors.As(err, tt.target), "%v", err)
			assert.Contains(t, err.Error(), "converse: turn 1: ")
		})
	}
}

func TestStreamCancellationClosesPromptly(t *testing.T) {
	reply := bedrocktest.Text("A slow answer that would take many seconds to stream in full.")
	reply.StallAfter = 3 // only cancellation can end the turn
	_, client := serve(t, bedrocktest.Script(reply))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := converse.New(client, claude, nil, streaming, func(o *converse.Options) {
			o.OnEvent = func(ev converse.Event) {
				if _, ok := ev.(converse.Text); ok {
					once.Do(cancel)
				}
			}
		}).Send(ctx, "Hi")

		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(30 * time.Second): // a failsafe: the stalled stream never ends
		t.Fatal("cancellation waited for the stream")
	}
}

func TestStreamFallsBackForModelsWithoutStreamingTools(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}}),
		bedrocktest.Text("3."),
	))
	var fallbacks []converse.StreamFallback
	res, err := converse.New(client, "us.meta.llama3-1-70b-instruct-v1:0", calculator(t), streaming,
		func(o *converse.Options) {
			o.OnEvent = func(ev converse.Event) {
				if f, ok := ev.(converse.StreamFallback); ok {
					fallbacks = append(fallbacks, f)
				}
			}
		}).Send(context.Background(), "1+2?")

	require.NoError(t, err)
	assert.Equal(t, "3.", res.Text)
	require.Len(t, fallbacks, 2)
	assert.Contains(t, fallbacks[0].Reason, "does not support tool use in streaming mode")
	for _, r := range srv.Requests() {
		assert.Equal(t, recording.OpConverse, r.Operation)
	}
}

// streamEvents builds a stream by hand, for inputs the server's own
// chunking would not produce.
func streamEvents(t *testing.T, stop types.StopReason, toolInput ...string) []recording.Event {
	t.Helper()
	ev := func(typ string, payload any) recording.Event {
		b, err := json.Marshal(payload)
		require.NoError(t, err)
		return recording.Event{Type: typ, Payload: b}
	}
	events := []recording.Event{
		ev("messageStart", map[string]any{"role": "assistant", "p": "abc"}),
		ev("contentBlockStart", map[string]any{"contentBlockIndex": 0, "start": map[string]any{"toolUse": map[string]any{"toolUseId": "t1", "name": "calculator"}}}),
	}
	for _, in := range toolInput {
		events = append(events, ev("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]any{"toolUse": map[string]any{"input": in}}, "p": "abcdefgh"}))
	}
	return append(events,
		ev("contentBlockStop", map[string]any{"contentBlockIndex": 0}),
		ev("messageStop", map[string]any{"stopReason": string(stop)}),
		ev("metadata", map[string]any{"usage": map[string]any{"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": map[string]any{"latencyMs": 100}}),
	)
}

func TestStreamToolInput(t *testing.T) {
	tests := []struct {
		name      string
		fragments []string
		wantRan   bool
		wantText  string
	}{
		{"fragments with an empty first one, as Claude sends", []string{"", `{"a": 1`, `, "b"`, `: 2}`}, true, "3"},
		{"one fragment, as Nova sends", []string{`{"a":1,"b":2}`}, true, "3"},
		{"no arguments: only empty fragments mean {}", []string{"", ""}, false, `missing required`},
		{"input that is not JSON is an error, not {}", []string{`{"a": 1, "b"`}, false, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(
				&bedrocktest.Reply{Events: streamEvents(t, types.StopReasonToolUse, tt.fragments...)},
				bedrocktest.Text("ok"),
			))
			var ran atomic.Int32
			_, err := converse.New(client, claude, countingCalculator(t, &ran), streaming).Send(context.Background(), "1+2?")
			require.NoError(t, err)
			assert.Equal(t, tt.wantRan, ran.Load() == 1)
			r := resultsOf(t, srv.Requests()[1].Messages[2])[0]
			assert.Contains(t, r.Text, tt.wantText)
		})
	}
}

func TestStreamEmptyInputIsAnEmptyObject(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		&bedrocktest.Reply{Events: streamEvents(t, types.StopReasonToolUse, "")},
		bedrocktest.Text("ok"),
	))
	noArgs, err := tools.New("calculator", "Takes no arguments.", func(context.Context, struct{}) (string, error) { return "pong", nil })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(noArgs)
	require.NoError(t, err)
	_, err = converse.New(client, claude, reg, streaming).Send(context.Background(), "ping")
	require.NoError(t, err)
	assert.Equal(t, `"pong"`, resultsOf(t, srv.Requests()[1].Messages[2])[0].Text)
	echoed := srv.Requests()[1].Messages[1].Content[0].(*types.ContentBlockMemberToolUse)
	b, err := echoed.Value.Input.MarshalSmithyDocument()
	require.NoError(t, err)
	assert.JSONEq(t, `{}`, string(b))
}

// TestEarlyToolStartOverlapsTheStream: with EarlyToolStart a speculative call
// starts when its block is complete, while the rest of the turn is still
// streaming. The stream stalls after the call's block and a first text delta
// and ends only when the test cancels, once the tool has started. A call that
// waited for its turn to end would never start.
func TestEarlyToolStartOverlapsTheStream(t *testing.T) {
	first := bedrocktest.Output(types.StopReasonToolUse,
		&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("t1"), Name: aws.String("slow"), Input: documentOf(map[string]any{})}},
		text("While that runs, here is a long explanation that keeps the stream busy."),
	)
	first.Chunk = 1000   // one delta a block: messageStart, the call's start, delta and stop, a text delta
	first.StallAfter = 5 // then nothing until the client goes away
	_, client := serve(t, bedrocktest.Script(first))
	started := make(chan struct{})
	slow, err := tools.New("slow", "Waits for its context.", func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		return "", ctx.Err()
	}, func(o *tools.Options) { o.Speculative = true })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(slow)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var turnEnded atomic.Int32
	done := make(chan error, 1)
	go func() {
		_, err := converse.New(client, claude, reg, streaming, func(o *converse.Options) {
			o.Stream.EarlyToolStart = true
			o.OnEvent = func(ev converse.Event) {
				if _, ok := ev.(converse.TurnEnd); ok {
					turnEnded.Add(1)
				}
			}
		}).Send(ctx, "go")

		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the turn ended before the call started: %v", err)
	case <-time.After(30 * time.Second): // a failsafe: the stalled stream never ends
		t.Fatal("the call did not start while its turn was streaming")
	}
	assert.Zero(t, turnEnded.Load(), "the call started before its turn ended")
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.Zero(t, turnEnded.Load(), "the stalled turn never ended")
}

func TestEarlyResultsDiscardedWhenTheTurnFails(t *testing.T) {
	// The call is complete first; text keeps the stream going, then it breaks.
	reply := bedrocktest.Output(types.StopReasonToolUse,
		&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("t1"), Name: aws.String("wait"), Input: documentOf(map[string]any{})}},
		text("More text streams while the call runs."))
	reply.DropMessageStop = true
	reply.Interval = 20 * time.Millisecond
	_, client := serve(t, bedrocktest.Script(reply))
	cancelled := make(chan struct{})
	wait, err := tools.New("wait", "Waits for its context.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		close(cancelled)
		return "", ctx.Err()
	}, func(o *tools.Options) { o.Speculative = true })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(wait)
	require.NoError(t, err)
	c := converse.New(client, claude, reg, streaming, func(o *converse.Options) { o.Stream.EarlyToolStart = true })
	_, err = c.Send(context.Background(), "go")
	require.ErrorIs(t, err, converse.ErrStreamTruncated)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the early call was not cancelled")
	}
	assert.Len(t, c.History(), 1, "only the prompt is kept")
}

func TestEarlyStartSkipsToolsNotMarkedSpeculative(t *testing.T) {
	first := bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "add", Input: map[string]any{"a": 1, "b": 2}})
	_, client := serve(t, bedrocktest.Script(first, bedrocktest.Text("3")))
	var starts []int
	_, err := converse.New(client, claude, testTools(t, nil), streaming, func(o *converse.Options) {
		o.Stream.EarlyToolStart = true
		o.OnEvent = func(ev converse.Event) {
			switch ev := ev.(type) {
			case converse.ToolStart:
				starts = append(starts, 0)
			case converse.TurnEnd:
				starts = append(starts, ev.Turn)
			}
		}
	}).Send(context.Background(), "1+2")

	require.NoError(t, err)
	assert.Equal(t, []int{1, 0, 2}, starts, "a non-speculative tool starts after its turn ends")
}

func documentOf(v map[string]any) document.Interface { return document.NewLazyDocument(v) }

// TestStreamToolInputKeepsNumbersExact: the toolUse echoed back holds the
// input digit for digit, and observers see it compact.
func TestStreamToolInputKeepsNumbersExact(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		&bedrocktest.Reply{Events: streamEvents(t, types.StopReasonToolUse, `{ "a": 9007199254740993,`, ` "b": 0.1 }`)},
		bedrocktest.Text("ok"),
	))
	var inputs []string
	_, err := converse.New(client, claude, calculator(t), streaming, func(o *converse.Options) {
		o.OnEvent = func(ev converse.Event) {
			if s, ok := ev.(converse.ToolStart); ok {
				inputs = append(inputs, string(s.Input))
			}
		}
	}).Send(context.Background(), "big")

	require.NoError(t, err)
	assert.Equal(t, []string{`{"a":9007199254740993,"b":0.1}`}, inputs)
	assert.Contains(t, string(srv.Requests()[1].Body), `9007199254740993`)
}

// TestEarlyStartRepeatedIDAcrossTools: a streamed turn repeats a toolUseId
// for a tool with side effects and a speculative one, which starts early.
// The first call must run and get its own output; the repeat gets the
// duplicate-id error, never the other call's output.
func TestEarlyStartRepeatedIDAcrossTools(t *testing.T) {
	for _, order := range [][]string{{"side", "peek"}, {"peek", "side"}} {
		t.Run(order[0]+" first", func(t *testing.T) {
			var sideRuns atomic.Int32
			side, err := tools.New("side", "Has a side effect.", func(context.Context, struct{}) (string, error) {
				sideRuns.Add(1)
				return "side effect done", nil
			})
			require.NoError(t, err)
			peek, err := tools.New("peek", "Only reads.", func(context.Context, struct{}) (string, error) {
				return "peeked", nil
			}, func(o *tools.Options) { o.Speculative = true })
			require.NoError(t, err)
			reg, err := tools.NewRegistry(side, peek)
			require.NoError(t, err)
			srv, client := serve(t, bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "dup", Name: order[0]}, bedrocktest.Call{ID: "dup", Name: order[1]}),
				bedrocktest.Text("done")))
			ends := map[string]converse.ToolEnd{}
			var mu sync.Mutex
			_, _ = converse.New(client, claude, reg, streaming, func(o *converse.Options) {
				o.Stream.EarlyToolStart = true
				o.OnEvent = func(ev converse.Event) {
					if end, ok := ev.(converse.ToolEnd); ok {
						mu.Lock()
						ends[end.Name] = end
						mu.Unlock()
					}
				}
			}).Send(context.Background(), "go")

			outputs := map[string]string{"side": `"side effect done"`, "peek": `"peeked"`}
			first, repeat := ends[order[0]], ends[order[1]]
			assert.Equal(t, outputs[order[0]], string(first.Output))
			assert.NoError(t, first.Err)
			assert.ErrorIs(t, repeat.Err, converse.ErrDuplicateID)
			assert.Nil(t, repeat.Output)
			wantSide := int32(0)
			if order[0] == "side" {
				wantSide = 1
			}
			assert.Equal(t, wantSide, sideRuns.Load(), "times the side-effect tool ran")
			reqs := srv.Requests()
			require.GreaterOrEqual(t, len(reqs), 2)
			got := resultsOf(t, reqs[1].Messages[2])
			require.Len(t, got, 2)
			assert.Equal(t, result{"dup", outputs[order[0]], types.ToolResultStatusSuccess}, got[0])
			assert.Contains(t, got[1].Text, `duplicate toolUseId: "dup"`)
		})
	}
}

// TestConcurrentStreamsOneClient: streamed conversations running at once on
// one client, as a service shares one, each get their own answer. The race
// detector finds nothing in the SDK's event-stream decoding. Each
// ConverseStream call has a codec of its own, because the client's is shared
// by all its streams.
func TestConcurrentStreamsOneClient(t *testing.T) {
	echo := bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		prompt := req.Messages[len(req.Messages)-1].Content[0].(*types.ContentBlockMemberText).Value
		return bedrocktest.Text("the answer to " + prompt + ", long enough to come in several deltas"), nil
	})
	_, client := serve(t, echo)
	const goroutines, each = 8, 5
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				prompt := fmt.Sprintf("question %d.%d", g, i)
				res, err := converse.New(client, claude, nil, streaming).Send(context.Background(), prompt)
				if assert.NoError(t, err, prompt) {
					assert.Equal(t, "the answer to "+prompt+", long enough to come in several deltas", res.Text)
				}
			}
		})
	}
	wg.Wait()
}

// TestDeepSeekReasoningIsNotSentBack: DeepSeek on Bedrock rejects reasoning
// blocks in a request, its own replies' included, so a reply's reasoning is
// not kept. The tool round and the next Send go through. bedrocktest answers
// reasoning in a DeepSeek request with Bedrock's error.
func TestDeepSeekReasoningIsNotSentBack(t *testing.T) {
	const deepseek = "us.deepseek.v3-v1:0"
	thought := func(s string) types.ContentBlock {
		return &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: types.ReasoningTextBlock{Text: aws.String(s)}}}
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(
				bedrocktest.Output(types.StopReasonToolUse, thought("Add them."), clientCall("tooluse_1", map[string]any{"a": 1, "b": 2})),
				bedrocktest.Output(types.StopReasonEndTurn, thought("It is 3."), text("3.")),
				bedrocktest.Output(types.StopReasonEndTurn, thought("Again."), text("Still 3.")),
			))
			var calls atomic.Int32
			c := converse.New(client, deepseek, countingCalculator(t, &calls), mode.opt)
			res, err := c.Send(context.Background(), "1+2?")
			require.NoError(t, err)
			assert.Equal(t, "3.", res.Text)
			assert.Equal(t, int32(1), calls.Load())
			assert.Len(t, res.Message.Content, 1, "the reply without its reasoning")
			res, err = c.Send(context.Background(), "Sure?")
			require.NoError(t, err)
			assert.Equal(t, "Still 3.", res.Text)
			require.Len(t, srv.Requests(), 3)
			assertValid(t, c, deepseek)
		})
	}
}
