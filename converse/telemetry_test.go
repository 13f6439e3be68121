package converse_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
)

// traced records the spans and metrics of the conversations it configures.
type traced struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTraced(t *testing.T) *traced {
	t.Helper()
	tr := &traced{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tr.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tr.spans))
	tr.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tr.reader))
	t.Cleanup(func() {
		_ = tr.tp.Shutdown(context.Background())
		_ = tr.mp.Shutdown(context.Background())
	})
	return tr
}

func (tr *traced) options(o *converse.Options) {
	o.Telemetry.TracerProvider, o.Telemetry.MeterProvider = tr.tp, tr.mp
}

// named returns the ended spans called name, in the order they ended.
func (tr *traced) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tr.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func (tr *traced) one(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	s := tr.named(name)
	require.Len(t, s, 1, "spans named %q", name)
	return s[0]
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func serverAddr(t *testing.T, client *bedrockruntime.Client) (string, int64) {
	t.Helper()
	u, err := url.Parse(aws.ToString(client.Options().BaseEndpoint))
	require.NoError(t, err)
	port, err := strconv.Atoi(u.Port())
	require.NoError(t, err)
	return u.Hostname(), int64(port)
}

func TestTelemetryConversation(t *testing.T) {
	tr := newTraced(t)
	reply := bedrocktest.Text("20 and 60.")
	reply.Output.Usage.CacheReadInputTokens = aws.Int32(7)
	reply.Output.Usage.CacheWriteInputTokens = aws.Int32(3)
	_, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("I'll add both.",
			bedrocktest.Call{ID: "AB3", Name: "calculator", Input: map[string]any{"a": 10, "b": 10}},
			bedrocktest.Call{ID: "PO9", Name: "calculator", Input: map[string]any{"a": 30, "b": 30}}),
		reply,
	))
	const model = "us.anthropic.claude-sonnet-4-20250514-v1:0" // which takes temperature and topP together
	ctx, caller := tr.tp.Tracer("test").Start(context.Background(), "caller")
	_, err := converse.New(client, model, calculator(t), tr.options, func(o *converse.Options) {
		o.Request.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(512), Temperature: aws.Float32(0.7),
			TopP: aws.Float32(0.9), StopSequences: []string{"STOP"}}
		o.Request.GuardrailConfig = &types.GuardrailConfiguration{GuardrailIdentifier: aws.String("gr-1"), GuardrailVersion: aws.String("1")}
	}).Send(ctx, "Add")

	require.NoError(t, err)
	caller.End()

	send := tr.one(t, "invoke_agent")
	assert.Equal(t, trace.SpanKindInternal, send.SpanKind())
	assert.Equal(t, caller.SpanContext().SpanID(), send.Parent().SpanID(), "the Send nests under the caller's span")
	assert.Equal(t, caller.SpanContext().TraceID(), send.SpanContext().TraceID())
	sa := attrs(send)
	assert.Equal(t, "invoke_agent", sa["gen_ai.operation.name"].AsString())
	// Bedrock's inputTokens leave the cached ones out; the conventions'
	// input_tokens count them: 10, then 10 + 7 read + 3 written.
	assert.Equal(t, int64(30), sa["gen_ai.usage.input_tokens"].AsInt64(), "the Send's usage is the sum of its turns'")

	chats := tr.named("chat " + model)
	require.Len(t, chats, 2)
	host, port := serverAddr(t, client)
	for i, c := range chats {
		assert.Equal(t, trace.SpanKindClient, c.SpanKind())
		assert.Equal(t, send.SpanContext().SpanID(), c.Parent().SpanID())
		assert.Equal(t, codes.Unset, c.Status().Code)
		a := attrs(c)
		assert.Equal(t, "chat", a["gen_ai.operation.name"].AsString())
		assert.Equal(t, "aws.bedrock", a["gen_ai.provider.name"].AsString())
		assert.Equal(t, model, a["gen_ai.request.model"].AsString())
		assert.Equal(t, int64(512), a["gen_ai.request.max_tokens"].AsInt64())
		assert.Equal(t, 0.7, a["gen_ai.request.temperature"].AsFloat64(), "the decimal the caller wrote, not float32's 0.699999988079071")
		assert.Equal(t, 0.9, a["gen_ai.request.top_p"].AsFloat64())
		assert.Equal(t, []string{"STOP"}, a["gen_ai.request.stop_sequences"].AsStringSlice())
		assert.Equal(t, "gr-1", a["aws.bedrock.guardrail.id"].AsString())
		assert.Equal(t, host, a["server.address"].AsString())
		assert.Equal(t, port, a["server.port"].AsInt64())
		assert.Equal(t, int64(10+10*i), a["gen_ai.usage.input_tokens"].AsInt64(), "the cached tokens of the second call included")
		assert.Equal(t, int64(5), a["gen_ai.usage.output_tokens"].AsInt64())
		_, stream := a["gen_ai.request.stream"]
		assert.False(t, stream, "set only when streaming")
		_, content := a["gen_ai.input.messages"]
		assert.False(t, content, "content is recorded only when opted in")
		if i == 0 {
			assert.Equal(t, []string{"tool_use"}, a["gen_ai.response.finish_reasons"].AsStringSlice())
			_, cache := a["gen_ai.usage.cache_read.input_tokens"]
			assert.False(t, cache, "cache counts only when present")
		} else {
			assert.Equal(t, []string{"end_turn"}, a["gen_ai.response.finish_reasons"].AsStringSlice())
			assert.Equal(t, int64(7), a["gen_ai.usage.cache_read.input_tokens"].AsInt64())
			assert.Equal(t, int64(3), a["gen_ai.usage.cache_creation.input_tokens"].AsInt64())
		}
	}

	calls := tr.named("execute_tool calculator")
	require.Len(t, calls, 2)
	ids := map[string]bool{}
	for _, c := range calls {
		assert.Equal(t, trace.SpanKindInternal, c.SpanKind())
		assert.Equal(t, send.SpanContext().SpanID(), c.Parent().SpanID(), "the calls are siblings under the Send")
		a := attrs(c)
		assert.Equal(t, "execute_tool", a["gen_ai.operation.name"].AsString())
		assert.Equal(t, "calculator", a["gen_ai.tool.name"].AsString())
		assert.Equal(t, "function", a["gen_ai.tool.type"].AsString())
		assert.NotEmpty(t, a["gen_ai.tool.description"].AsString())
		_, content := a["gen_ai.tool.call.arguments"]
		assert.False(t, content)
		ids[a["gen_ai.tool.call.id"].AsString()] = true
	}
	assert.Equal(t, map[string]bool{"AB3": true, "PO9": true}, ids)
}

// TestTelemetryConcurrentCallsAreSiblings runs two calls that each wait for
// the other to start: they overlap, and neither span nests in the other.
func TestTelemetryConcurrentCallsAreSiblings(t *testing.T) {
	tr := newTraced(t)
	var started sync.WaitGroup
	started.Add(2)
	barrier, err := tools.New("barrier", "Waits for its sibling.", func(ctx context.Context, _ struct{}) (string, error) {
		started.Done()
		started.Wait()
		return "ok", nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(barrier)
	require.NoError(t, err)
	_, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "a", Name: "barrier"}, bedrocktest.Call{ID: "b", Name: "barrier"}),
		bedrocktest.Text("done"),
	))
	_, err = converse.New(client, claude, reg, tr.options).Send(context.Background(), "go")
	require.NoError(t, err)
	send := tr.one(t, "invoke_agent")
	calls := tr.named("execute_tool barrier")
	require.Len(t, calls, 2)
	for _, c := range calls {
		assert.Equal(t, send.SpanContext().SpanID(), c.Parent().SpanID())
	}
	assert.True(t, calls[0].StartTime().Before(calls[1].EndTime()) && calls[1].StartTime().Before(calls[0].EndTime()),
		"the calls overlap")
}

func TestTelemetryStream(t *testing.T) {
	for _, early := range []bool{false, true} {
		t.Run("early="+strconv.FormatBool(early), func(t *testing.T) {
			tr := newTraced(t)
			spec, err := tools.New("lookup", "Looks up.", func(ctx context.Context, _ struct{}) (string, error) {
				return "found", nil
			}, func(o *tools.Options) { o.Speculative = true })
			require.NoError(t, err)
			reg, err := tools.NewRegistry(spec)
			require.NoError(t, err)
			_, client := serve(t, bedrocktest.Script(
				bedrocktest.ToolUse("Looking.", bedrocktest.Call{ID: "l1", Name: "lookup"}),
				bedrocktest.Text("Found it."),
			))
			_, err = converse.New(client, claude, reg, tr.options, streaming,
				func(o *converse.Options) { o.Stream.EarlyToolStart = early }).Send(context.Background(), "find")

			require.NoError(t, err)
			send := tr.one(t, "invoke_agent")
			chats := tr.named("chat " + claude)
			require.Len(t, chats, 2)
			for _, c := range chats {
				a := attrs(c)
				assert.True(t, a["gen_ai.request.stream"].AsBool())
				assert.Greater(t, a["gen_ai.response.time_to_first_chunk"].AsFloat64(), 0.0)
				assert.Equal(t, int64(5), a["gen_ai.usage.output_tokens"].AsInt64())
				assert.Equal(t, send.SpanContext().SpanID(), c.Parent().SpanID())
			}
			call := tr.one(t, "execute_tool lookup")
			assert.Equal(t, send.SpanContext().SpanID(), call.Parent().SpanID(), "an early call is a sibling of the chat, not its child")
			assert.Equal(t, "l1", attrs(call)["gen_ai.tool.call.id"].AsString())
		})
	}
}

func TestTelemetryChatErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		h      bedrocktest.Handler
		stream bool
		want   string
	}{
		{"throttling", bedrocktest.Fail(1, bedrocktest.Throttling(), bedrocktest.Script(bedrocktest.Text("x"))), false, "ThrottlingException"},
		{"validation", bedrocktest.Fail(1, bedrocktest.Validation("bad"), bedrocktest.Script(bedrocktest.Text("x"))), false, "ValidationException"},
		{"stream throttling", bedrocktest.Fail(1, bedrocktest.Throttling(), bedrocktest.Script(bedrocktest.Text("x"))), true, "ThrottlingException"},
		{"stream truncated", bedrocktest.Script(&bedrocktest.Reply{Output: bedrocktest.Text("hello there").Output, DropMessageStop: true}), true, "stream_truncated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTraced(t)
			srv := bedrocktest.NewServer(tc.h)
			t.Cleanup(srv.Close)
			client := srv.Client(func(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} })
			_, err := converse.New(client, claude, nil, tr.options,
				func(o *converse.Options) { o.Stream = streamIf(tc.stream) }).Send(context.Background(), "Hi")

			require.Error(t, err)
			for _, s := range []sdktrace.ReadOnlySpan{tr.one(t, "chat "+claude), tr.one(t, "invoke_agent")} {
				assert.Equal(t, codes.Error, s.Status().Code, s.Name())
				assert.Equal(t, tc.want, attrs(s)["error.type"].AsString(), s.Name())
			}
		})
	}
}

// TestTelemetryToolErrors gives each failure class of a call its error.type.
func TestTelemetryToolErrors(t *testing.T) {
	failing, err := tools.New("failing", "Fails.", func(ctx context.Context, _ struct{}) (string, error) {
		return "", errors.New("the disk is full")
	})
	require.NoError(t, err)
	panicking, err := tools.New("panicking", "Panics.", func(ctx context.Context, _ struct{}) (string, error) {
		panic("boom")
	})
	require.NoError(t, err)
	slow, err := tools.New("slow", "Outlives its timeout.", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, func(o *tools.Options) { o.Timeout = time.Millisecond })
	require.NoError(t, err)
	unencodable, err := tools.New("unencodable", "Returns what JSON cannot hold.", func(ctx context.Context, _ struct{}) (func(), error) {
		return func() {}, nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(tools.Calculator(), failing, panicking, slow, unencodable)
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		calls []bedrocktest.Call
		want  []string // the error.type of each span, "" for none
	}{
		{"unknown tool", []bedrocktest.Call{{ID: "u", Name: "nosuch"}}, []string{"unknown_tool"}},
		{"invalid input", []bedrocktest.Call{{ID: "i", Name: "calculator", Input: map[string]any{"a": "ten"}}}, []string{"invalid_input"}},
		{"tool error", []bedrocktest.Call{{ID: "f", Name: "failing"}}, []string{"tool_error"}},
		{"panic", []bedrocktest.Call{{ID: "p", Name: "panicking"}}, []string{"panic"}},
		{"timeout", []bedrocktest.Call{{ID: "s", Name: "slow"}}, []string{"timeout"}},
		{"output", []bedrocktest.Call{{ID: "o", Name: "unencodable"}}, []string{"output_error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTraced(t)
			srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.ToolUse("", tc.calls...), bedrocktest.Text("ok")),
				func(o *bedrocktest.Options) { o.Lenient = true })
			t.Cleanup(srv.Close)
			_, err := converse.New(srv.Client(), claude, reg, tr.options).Send(context.Background(), "go")
			require.NoError(t, err, "a failed call is data for the model")
			var got []string
			for _, s := range tr.spans.Ended() {
				a := attrs(s)
				if a["gen_ai.operation.name"].AsString() != "execute_tool" {
					continue
				}
				got = append(got, a["error.type"].AsString())
				if a["error.type"].AsString() != "" {
					assert.Equal(t, codes.Error, s.Status().Code)
				} else {
					assert.Equal(t, codes.Unset, s.Status().Code)
				}
			}
			assert.ElementsMatch(t, tc.want, got)
		})
	}
}

func TestTelemetryCancelledCall(t *testing.T) {
	tr := newTraced(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiting, err := tools.New("waiting", "Waits for cancellation.", func(ctx context.Context, _ struct{}) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(waiting)
	require.NoError(t, err)
	_, client := serve(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "w", Name: "waiting"}), bedrocktest.Text("ok")))
	_, err = converse.New(client, claude, reg, tr.options).Send(ctx, "go")
	require.ErrorIs(t, err, context.Canceled)
	call := tr.one(t, "execute_tool waiting")
	assert.Equal(t, "cancelled", attrs(call)["error.type"].AsString())
	send := tr.one(t, "invoke_agent")
	assert.Equal(t, "cancelled", attrs(send)["error.type"].AsString())
}

func TestTelemetryRecordContent(t *testing.T) {
	tr := newTraced(t)
	_, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("Adding.", bedrocktest.Call{ID: "c1", Name: "calculator", Input: map[string]any{"a": 2, "b": 3}}),
		bedrocktest.Text("5."),
	))
	_, err := converse.New(client, claude, calculator(t), tr.options, func(o *converse.Options) {
		o.Telemetry.RecordContent = true
		o.Request.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}}
	}).Send(context.Background(), "Add 2 and 3")

	require.NoError(t, err)
	chats := tr.named("chat " + claude)
	require.Len(t, chats, 2)
	first := attrs(chats[0])
	assert.JSONEq(t, `[{"role":"user","parts":[{"type":"text","content":"Add 2 and 3"}]}]`, first["gen_ai.input.messages"].AsString())
	assert.JSONEq(t, `[{"type":"text","content":"Be brief."}]`, first["gen_ai.system_instructions"].AsString())
	assert.JSONEq(t, `[{"role":"assistant","finish_reason":"tool_call","parts":[{"type":"text","content":"Adding."},
		{"type":"tool_call","id":"c1","name":"calculator","arguments":{"a":2,"b":3}}]}]`, first["gen_ai.output.messages"].AsString())
	second := attrs(chats[1])
	assert.Contains(t, second["gen_ai.input.messages"].AsString(), `{"type":"tool_call_response","id":"c1","response":[`)
	call := attrs(tr.one(t, "execute_tool calculator"))
	assert.JSONEq(t, `{"a":2,"b":3}`, call["gen_ai.tool.call.arguments"].AsString())
	assert.NotEmpty(t, call["gen_ai.tool.call.result"].AsString())
}

// sampler records the attributes each span starts with, which are all a
// sampler sees.
type sampler struct {
	mu   sync.Mutex
	seen map[string]map[attribute.Key]attribute.Value
}

func (s *sampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	kv := map[attribute.Key]attribute.Value{}
	for _, a := range p.Attributes {
		kv[a.Key] = a.Value
	}
	s.seen[p.Name] = kv
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
}

func (*sampler) Description() string { return "records the start attributes" }

// TestTelemetrySamplerSeesTheOperation: the attributes the conventions want
// "at span creation time" (operation, provider, model; with them the
// conversation's ids and the tool's name) are there when a sampler decides.
func TestTelemetrySamplerSeesTheOperation(t *testing.T) {
	smp := &sampler{seen: map[string]map[attribute.Key]attribute.Value{}}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(smp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	_, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "c1", Name: "calculator", Input: map[string]any{"a": 2, "b": 3}}),
		bedrocktest.Text("5."),
	))
	_, err := converse.New(client, claude, calculator(t), func(o *converse.Options) {
		o.Telemetry.TracerProvider, o.Telemetry.AgentName, o.Telemetry.ConversationID = tp, "adder", "conv-1"
	}).Send(context.Background(), "Add")

	require.NoError(t, err)
	want := map[string]map[attribute.Key]string{
		"invoke_agent adder":      {"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": claude},
		"chat " + claude:          {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "aws.bedrock", "gen_ai.request.model": claude},
		"execute_tool calculator": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calculator", "gen_ai.tool.type": "function"},
	}
	for name, kv := range want {
		seen, ok := smp.seen[name]
		require.True(t, ok, "no span %q was sampled", name)
		kv["gen_ai.agent.name"], kv["gen_ai.conversation.id"] = "adder", "conv-1"
		for k, v := range kv {
			assert.Equal(t, v, seen[k].AsString(), "%s of %q at its start", k, name)
		}
	}
}

func TestTelemetryMetrics(t *testing.T) {
	tr := newTraced(t)
	reply := bedrocktest.Text("5.")
	reply.Output.Usage.CacheReadInputTokens = aws.Int32(7)
	reply.Output.Usage.CacheWriteInputTokens = aws.Int32(3)
	_, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "c1", Name: "calculator", Input: map[string]any{"a": 2, "b": 3}}),
		reply,
	))
	_, err := converse.New(client, claude, calculator(t), tr.options, streaming, func(o *converse.Options) {
		o.Telemetry.AgentName = "adder"
	}).Send(context.Background(), "Add")

	require.NoError(t, err)
	var rm metricdata.ResourceMetrics
	require.NoError(t, tr.reader.Collect(context.Background(), &rm))
	got := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, "github.com/tooluse/bedrock/converse", sm.Scope.Name)
		for _, m := range sm.Metrics {
			got[m.Name] = m
		}
	}
	durationBounds := []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

	duration := got["gen_ai.client.operation.duration"]
	assert.Equal(t, "s", duration.Unit)
	dp := duration.Data.(metricdata.Histogram[float64]).DataPoints
	require.Len(t, dp, 1)
	assert.Equal(t, uint64(2), dp[0].Count, "two model calls")
	assert.Equal(t, durationBounds, dp[0].Bounds)
	op, _ := dp[0].Attributes.Value("gen_ai.operation.name")
	assert.Equal(t, "chat", op.AsString())
	addr, _ := dp[0].Attributes.Value("server.address")
	assert.NotEmpty(t, addr.AsString())

	tokens := got["gen_ai.client.token.usage"]
	assert.Equal(t, "{token}", tokens.Unit)
	sums := map[string]int64{}
	for _, p := range tokens.Data.(metricdata.Histogram[int64]).DataPoints {
		typ, _ := p.Attributes.Value("gen_ai.token.type")
		sums[typ.AsString()] = p.Sum
		assert.Equal(t, []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}, p.Bounds)
	}
	// The billed input tokens, the cached ones included: the conventions
	// want them, and Bedrock's inputTokens leave them out.
	assert.Equal(t, map[string]int64{"input": 30, "output": 10}, sums)

	first := got["gen_ai.client.operation.time_to_first_chunk"].Data.(metricdata.Histogram[float64]).DataPoints
	require.Len(t, first, 1)
	assert.Equal(t, uint64(2), first[0].Count)

	tool := got["gen_ai.execute_tool.duration"]
	assert.Equal(t, "s", tool.Unit)
	tp := tool.Data.(metricdata.Histogram[float64]).DataPoints
	require.Len(t, tp, 1)
	assert.Equal(t, uint64(1), tp[0].Count)
	for k, v := range map[attribute.Key]string{"gen_ai.tool.name": "calculator", "gen_ai.tool.type": "function", "gen_ai.agent.name": "adder"} {
		got, _ := tp[0].Attributes.Value(k)
		assert.Equal(t, v, got.AsString(), "the tool duration's %s", k)
	}
}

// TestTelemetryExecutorAlone traces an Executor used without a
// Conversation with the global providers: with none installed, nothing is
// recorded and nothing fails.
func TestTelemetryExecutorAlone(t *testing.T) {
	e := &converse.Executor{Registry: calculator(t)}
	results := e.Execute(context.Background(), []types.ContentBlock{&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
		ToolUseId: aws.String("x"), Name: aws.String("calculator"), Input: nil,
	}}})
	require.Len(t, results, 1)
}

// TestSummaryCallIsTraced: the summary call of a trim is built as every
// turn's request is, guardrail and request metadata included, and is
// traced as a chat span whose usage is the summary's.
func TestSummaryCallIsTraced(t *testing.T) {
	tr := newTraced(t)
	h, reg, opts := stepScenario(t)
	srv, client := serve(t, h, func(o *bedrocktest.Options) { o.Accounting = true })
	_, err := converse.New(client, claude, reg, opts, tr.options, func(o *converse.Options) {
		o.Request.GuardrailConfig = &types.GuardrailConfiguration{GuardrailIdentifier: aws.String("gr-1"), GuardrailVersion: aws.String("1")}
		o.Request.RequestMetadata = map[string]string{"team": "archive"}
		o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
			return call.Approve(), nil
		}
	}).Send(context.Background(), "Read the archive and tell ops.")

	require.NoError(t, err)
	var summaries int
	for _, req := range srv.Requests() {
		if !strings.Contains(string(req.Body), "Summarize the conversation so far") {
			continue
		}
		summaries++
		require.NotNil(t, req.GuardrailConfig, "the summary call carries the guardrail")
		assert.Equal(t, "gr-1", aws.ToString(req.GuardrailConfig.GuardrailIdentifier))
		assert.Equal(t, map[string]string{"team": "archive"}, req.RequestMetadata)
	}
	require.Positive(t, summaries)
	chats := tr.named("chat " + claude)
	assert.Len(t, chats, len(srv.Requests()), "one chat span for every model call, the summaries' included")
	for _, s := range chats {
		assert.Contains(t, attrs(s), attribute.Key("gen_ai.usage.output_tokens"))
	}
}

// TestTelemetryConversationID: every span of a conversation carries its
// gen_ai.conversation.id (ConversationID, else the Session's ID) and
// gen_ai.agent.name, which also names the Send's span.
func TestTelemetryConversationID(t *testing.T) {
	tests := []struct {
		name, id, agent, wantID, wantSend string
		session                           bool
	}{
		{name: "set", id: "chat-1", agent: "helper", wantID: "chat-1", wantSend: "invoke_agent helper"},
		{name: "the session's", session: true, wantID: "s1", wantSend: "invoke_agent"},
		{name: "set over the session's", id: "chat-2", session: true, wantID: "chat-2", wantSend: "invoke_agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTraced(t)
			_, client := serve(t, bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "c1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}}),
				bedrocktest.Text("3.")))
			_, err := converse.New(client, claude, calculator(t), tr.options, func(o *converse.Options) {
				o.Telemetry.ConversationID, o.Telemetry.AgentName = tt.id, tt.agent
				if tt.session {
					o.Session = &converse.Session{Store: filestore.Store{Dir: t.TempDir()}, ID: "s1"}
				}
			}).Send(context.Background(), "Add")

			require.NoError(t, err)
			spans := tr.spans.Ended()
			require.Len(t, spans, 4, "invoke_agent, two chats, one tool call")
			for _, s := range spans {
				a := attrs(s)
				assert.Equal(t, tt.wantID, a["gen_ai.conversation.id"].AsString(), s.Name())
				assert.Equal(t, tt.agent, a["gen_ai.agent.name"].AsString(), s.Name())
			}
			tr.one(t, tt.wantSend)
		})
	}
}

// panicking is a Client whose Converse panics, as a caller's own Client
// might.
type panicking struct{ converse.Client }

func (panicking) Converse(context.Context, *bedrockruntime.ConverseInput, ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	panic("the client's bug")
}

// TestTelemetryPanicEndsTheSpans: a panic of the caller's code passing through
// a Send (its OnEvent at a call's start, its Client) still ends every span it
// started, as aborted, so that they are exported. The panic goes on to the
// caller.
func TestTelemetryPanicEndsTheSpans(t *testing.T) {
	tests := []struct {
		name   string
		client func(converse.Client) converse.Client
		opts   func(*converse.Options)
		spans  int
	}{
		{"OnEvent", func(c converse.Client) converse.Client { return c }, func(o *converse.Options) {
			o.OnEvent = func(ev converse.Event) {
				if _, ok := ev.(converse.ToolStart); ok {
					panic("the listener's bug")
				}
			}
		}, 3},
		{"Client", func(c converse.Client) converse.Client { return panicking{c} }, func(*converse.Options) {}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTraced(t)
			_, client := serve(t, bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "c1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}}),
				bedrocktest.Text("3.")))
			assert.Panics(t, func() {
				_, _ = converse.New(tt.client(client), claude, calculator(t), tr.options, tt.opts).Send(context.Background(), "Add")
			})
			assert.Len(t, tr.spans.Started(), tt.spans)
			require.Len(t, tr.spans.Ended(), len(tr.spans.Started()), "every span started is ended")
			send := tr.one(t, "invoke_agent")
			assert.Equal(t, codes.Error, send.Status().Code)
			assert.Equal(t, "aborted", attrs(send)["error.type"].AsString())
		})
	}
}

// TestTelemetryInvalidAnswerKeepsContentOut: a structured Send that ends
// without a valid answer fails its span with error.type invalid_answer,
// and the status description leaves out the reason, which quotes the
// model's answer, unless content is recorded.
func TestTelemetryInvalidAnswerKeepsContentOut(t *testing.T) {
	for _, record := range []bool{false, true} {
		t.Run(fmt.Sprint("RecordContent=", record), func(t *testing.T) {
			tr := newTraced(t)
			bad := bedrocktest.Text(`{"color": "SECRET-NAME"}`)
			_, client := serve(t, bedrocktest.Script(bad, bad))
			conv := converse.New(client, claude, nil, tr.options, func(o *converse.Options) {
				o.MaxTurns, o.Telemetry.RecordContent = 2, record
			})
			_, _, err := converse.StructuredJSON(context.Background(), conv, "Pick a color.",
				[]byte(`{"type":"object","properties":{"color":{"type":"string","enum":["red","blue"]}},"required":["color"]}`))
			require.ErrorIs(t, err, converse.ErrInvalidAnswer)
			send := tr.one(t, "invoke_agent")
			assert.Equal(t, "max_turns", attrs(send)["error.type"].AsString(), "the turn limit ended it")
			assert.Equal(t, record, strings.Contains(send.Status().Description, "SECRET-NAME"), "%q", send.Status().Description)
			assert.Contains(t, send.Status().Description, "the answer does not match the schema")
		})
	}
}
