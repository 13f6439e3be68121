package converse_test

// The benchmarks behind BENCHMARKS.md; run them with `make bench`. Every
// measurement that has a hand-written counterpart runs it as the
// sub-benchmark impl=naive, next to impl=library, so that
// `benchstat -col /impl` puts the two side by side. The naive code
// (bench_naive_test.go) is the pattern teams write by hand against the raw
// SDK: it is the baseline, not an example to follow (it validates nothing
// and runs calls one by one). The conversation benchmarks also run
// impl=validated, the naive loop with the library's input checks, and
// impl=guarded, which also isolates and times each call as the library
// does. The probes are in bench_transport_test.go.
//
// Benchmarks report figures; none of them fails on time. BenchmarkScale
// (scale_bench_test.go) fails on correctness only: a conversation that did
// not complete, or a goroutine left behind.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/tools"
)

// benchModelID is a model family that accepts the status field and tool use
// while streaming, so both loops send the same requests.
const benchModelID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

// benchImpls are the two sides of every comparison, the baseline first so
// that benchstat reports the library relative to it.
var benchImpls = []string{"naive", "library"}

// benchConversationImpls are the conversation benchmarks' sides. The naive
// loop is the target's baseline. The validated loop is the naive loop with the
// library's input checks (validatedExecute). The guarded loop also runs each
// call isolated and timed, as the library does (guardedExecute). The last is
// the library. Read in that order, each step prices one guarantee.
var benchConversationImpls = []string{"naive", "validated", "guarded", "library"}

type benchArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

// benchAdd is the trivial tool: its cost is the executor's, not its own.
func benchAdd(_ context.Context, in benchArgs) (int, error) { return in.A + in.B, nil }

// benchSleep is the slow tool: 50 ms of waiting, as for a network call.
func benchSleep(_ context.Context, in benchArgs) (int, error) {
	time.Sleep(50 * time.Millisecond)
	return in.A + in.B, nil
}

// benchWait waits a milliseconds, as for a network call of known length.
func benchWait(_ context.Context, in benchArgs) (int, error) {
	time.Sleep(time.Duration(in.A) * time.Millisecond)
	return in.A + in.B, nil
}

func benchRegistry(b testing.TB) *tools.Registry {
	b.Helper()
	reg, err := newBenchRegistry()
	if err != nil {
		b.Fatal(err)
	}
	return reg
}

// newBenchRegistry is benchRegistry's registry, or why it could not be made.
func newBenchRegistry() (*tools.Registry, error) {
	add, err := tools.New("add", "Adds a and b.", benchAdd)
	if err != nil {
		return nil, err
	}
	sleep, err := tools.New("sleep", "Adds a and b, slowly.", benchSleep)
	if err != nil {
		return nil, err
	}
	return tools.NewRegistry(add, sleep)
}

// benchCalls returns n calls of a tool, with distinct IDs and inputs.
func benchCalls(name string, n int) []bedrocktest.Call {
	calls := make([]bedrocktest.Call, n)
	for i := range calls {
		calls[i] = bedrocktest.Call{ID: fmt.Sprintf("tooluse_%d", i), Name: name, Input: map[string]any{"a": i, "b": 7}}
	}
	return calls
}

// benchToolTurn returns the content of an assistant message asking for n calls
// of a tool, as the SDK client decodes it from a Converse response. The
// executors then see the SDK's own documents, not documents built in Go.
func benchToolTurn(b testing.TB, name string, n int) []types.ContentBlock {
	b.Helper()
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.ToolUse("", benchCalls(name, n)...)))
	defer srv.Close()
	out, err := srv.Client().Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId:  aws.String(benchModelID),
		Messages: []types.Message{benchUserText("go")},
	})
	if err != nil {
		b.Fatal(err)
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok || len(msg.Value.Content) != n {
		b.Fatalf("want a message with %d tool calls, got %#v", n, out.Output)
	}
	return msg.Value.Content
}

func benchUserText(s string) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: s}}}
}

// benchExecute runs one turn's calls with the implementation impl.
func benchExecute(impl string, exec *converse.Executor) func(context.Context, []types.ContentBlock) []types.ContentBlock {
	if impl == "naive" {
		return naiveExecute
	}
	return exec.Execute
}

// BenchmarkExecute measures the executor's overhead: one turn of 1, 8 and
// 64 calls of a trivial tool, each call on a goroutine of its own.
func BenchmarkExecute(b *testing.B) {
	reg := benchRegistry(b)
	ctx := context.Background()
	for _, n := range []int{1, 8, 64} {
		content := benchToolTurn(b, "add", n)
		for _, impl := range benchImpls {
			b.Run(fmt.Sprintf("calls=%d/impl=%s", n, impl), func(b *testing.B) {
				exec := &converse.Executor{Registry: reg}
				execute := benchExecute(impl, exec)
				for b.Loop() {
					if got := execute(ctx, content); len(got) != n {
						b.Fatalf("%d results for %d calls", len(got), n)
					}
				}
			})
		}
	}
}

// BenchmarkMachineParallelism measures the machine, not the library: the
// CPU work of 64 trivial tool calls (decoding the input, encoding the
// result) done by one goroutine, and split over GOMAXPROCS goroutines. It
// shows how much running calls at once can gain here before any executor
// is involved; BENCHMARKS.md reads BenchmarkExecute against it.
func BenchmarkMachineParallelism(b *testing.B) {
	const calls = 64
	input := []byte(`{"a":1,"b":7}`)
	work := func(n int) {
		for range n {
			var in benchArgs
			if err := json.Unmarshal(input, &in); err != nil {
				panic(err)
			}
			if _, err := json.Marshal(in.A + in.B); err != nil {
				panic(err)
			}
		}
	}
	procs := runtime.GOMAXPROCS(0)
	for _, goroutines := range []int{1, procs} {
		b.Run(fmt.Sprintf("goroutines=%d", goroutines), func(b *testing.B) {
			for b.Loop() {
				var wg sync.WaitGroup
				for g := 1; g < goroutines; g++ {
					wg.Go(func() { work(calls / goroutines) })
				}
				work(calls - (goroutines-1)*(calls/goroutines))
				wg.Wait()
			}
		})
	}
}

// BenchmarkExecuteSlowTool measures the wall time of a turn whose calls each
// wait 50 ms: concurrency should make 8 calls cost about one.
func BenchmarkExecuteSlowTool(b *testing.B) {
	reg := benchRegistry(b)
	ctx := context.Background()
	for _, n := range []int{1, 8} {
		content := benchToolTurn(b, "sleep", n)
		for _, impl := range benchImpls {
			b.Run(fmt.Sprintf("calls=%d/impl=%s", n, impl), func(b *testing.B) {
				execute := benchExecute(impl, &converse.Executor{Registry: reg})
				start := time.Now()
				for b.Loop() {
					execute(ctx, content)
				}
				b.ReportMetric(benchMillis(time.Since(start))/float64(b.N), "ms/turn")
			})
		}
	}
}

func benchMillis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func benchMicros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// benchModel is a stateless model. After a user's text it asks for two add
// calls, and keeps asking until the user has answered toolTurns rounds of
// calls since that text. Then it answers with text. Being stateless, it serves
// any number of conversations at once.
func benchModel(toolTurns int) bedrocktest.Handler {
	return benchModelCalling(toolTurns, benchCalls("add", 2))
}

// benchModelCalling is benchModel asking for calls instead of two adds.
func benchModelCalling(toolTurns int, calls []bedrocktest.Call) bedrocktest.Handler {
	return benchModelAsking(toolTurns, bedrocktest.ToolUse("", calls...))
}

// benchModelAsking is benchModel replying ask instead of asking for two
// adds.
func benchModelAsking(toolTurns int, ask *bedrocktest.Reply) bedrocktest.Handler {
	answer := bedrocktest.Text("The sums are 7 and 8.")
	return bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		rounds := 0
		for i := len(req.Messages) - 1; i >= 0; i -= 2 {
			if _, ok := req.Messages[i].Content[0].(*types.ContentBlockMemberToolResult); !ok {
				break
			}
			rounds++
		}
		if rounds < toolTurns {
			return ask, nil
		}
		return answer, nil
	})
}

// benchChat is one conversation driven by either loop.
type benchChat interface {
	Send(ctx context.Context, text string) error
}

func newBenchChat(b testing.TB, impl string, client converse.Client, reg *tools.Registry) benchChat {
	return newBenchChatStreamed(b, impl, false, client, reg)
}

// newBenchChatStreamed is newBenchChat, with ConverseStream if stream is
// set.
func newBenchChatStreamed(b testing.TB, impl string, stream bool, client converse.Client, reg *tools.Registry) benchChat {
	chat, err := benchChatFor(impl, stream, client, reg)
	if err != nil {
		b.Fatal(err)
	}
	return chat
}

// benchChatFor is the conversation of impl, with ConverseStream if stream
// is set, or why it could not start.
func benchChatFor(impl string, stream bool, client converse.Client, reg *tools.Registry) (benchChat, error) {
	if impl == "library" {
		var opts []func(*converse.Options)
		if stream {
			opts = append(opts, func(o *converse.Options) { o.Stream = &converse.StreamPolicy{} })
		}
		return benchConversation{converse.New(client, benchModelID, reg, opts...)}, nil
	}
	chat, err := naiveChatFor(impl, client, reg)
	switch {
	case err != nil:
		return nil, err
	case stream:
		return &naiveStreamChat{chat}, nil
	}
	return chat, nil
}

type benchConversation struct{ c *converse.Conversation }

func (c benchConversation) Send(ctx context.Context, text string) error {
	_, err := c.c.Send(ctx, text)
	return err
}

// BenchmarkConversation is a whole 3-turn tool conversation (two rounds of two
// calls, then the answer) through the real SDK client against bedrocktest on
// loopback, with Converse (stream=false) or ConverseStream (stream=true). The
// server runs in the same process, so both sides pay for it as they pay for
// the SDK. cpu-ns/op is the process's CPU time (user and system, server and
// garbage collector included) per conversation.
func BenchmarkConversation(b *testing.B) {
	srv := bedrocktest.NewServer(benchModel(2))
	defer srv.Close()
	client := srv.Client()
	reg := benchRegistry(b)
	ctx := context.Background()
	for _, stream := range []bool{false, true} {
		for _, impl := range benchConversationImpls {
			b.Run(fmt.Sprintf("turns=3/stream=%t/impl=%s", stream, impl), func(b *testing.B) {
				cpu := benchCPU()
				for b.Loop() {
					if err := newBenchChatStreamed(b, impl, stream, client, reg).Send(ctx, "Add things."); err != nil {
						b.Fatal(err)
					}
				}
				benchReportCPU(b, cpu)
			})
		}
	}
}

// benchWaits are the calls of BenchmarkConversationSlowTools: one turn of
// tools that wait 5, 10, 20 and 40 ms.
var benchWaits = []int{5, 10, 20, 40}

// BenchmarkConversationSlowTools is a 2-turn conversation whose first turn
// asks for four calls that wait 5, 10, 20 and 40 ms (as for network calls),
// through the real SDK client on loopback. ms/tool-turn is the wall time
// from the last byte of the response that asks for the calls to the start
// of the request that carries their results. x-slowest is that time over
// the slowest call's 40 ms: 1.00 is the floor for calls started once the
// response is over.
//
// The reply that asks for the calls has a text after them (benchSlowAsk):
// streamed, it lasts about 50 ms past the last call. With early=true (StreamPolicy.EarlyToolStart) the calls start as
// each block completes, so they overlap the rest of the stream and
// x-slowest can fall below 1.
func BenchmarkConversationSlowTools(b *testing.B) {
	calls := make([]bedrocktest.Call, len(benchWaits))
	for i, ms := range benchWaits {
		calls[i] = bedrocktest.Call{ID: fmt.Sprintf("tooluse_%d", i), Name: "wait", Input: map[string]any{"a": ms, "b": 7}}
	}
	srv := bedrocktest.NewServer(benchModelAsking(1, benchSlowAsk(calls)))
	defer srv.Close()
	transport := newBenchTransport(2)
	defer transport.base.CloseIdleConnections()
	client := &benchGapClient{Client: transport.client(srv), transport: transport}
	wait, err := tools.New("wait", "Waits a milliseconds, then adds a and b.", benchWait, func(o *tools.Options) { o.Speculative = true })
	if err != nil {
		b.Fatal(err)
	}
	reg, err := tools.NewRegistry(wait)
	if err != nil {
		b.Fatal(err)
	}
	for _, side := range []struct {
		name    string
		newChat func() benchChat
	}{
		{"stream=false/impl=naive", func() benchChat { return newBenchChat(b, "naive", client, reg) }},
		{"stream=false/impl=library", func() benchChat { return newBenchChat(b, "library", client, reg) }},
		{"stream=true/early=false/impl=library", func() benchChat { return benchStreamed(client, reg, false) }},
		{"stream=true/early=true/impl=library", func() benchChat { return benchStreamed(client, reg, true) }},
	} {
		b.Run("calls=4/"+side.name, func(b *testing.B) { benchSlowTools(b, client, side.newChat) })
	}
}

// benchSlowTools runs BenchmarkConversationSlowTools's conversations with
// chats made by newChat, and reports their tool turns.
func benchSlowTools(b *testing.B, client *benchGapClient, newChat func() benchChat) {
	client.gaps, client.n = 0, 0
	for b.Loop() {
		client.first = true
		if err := newChat().Send(context.Background(), "Wait for things."); err != nil {
			b.Fatal(err)
		}
	}
	if client.n != b.N {
		b.Fatalf("%d tool turns in %d conversations", client.n, b.N)
	}
	turn := client.gaps / time.Duration(client.n)
	b.ReportMetric(benchMillis(turn), "ms/tool-turn")
	b.ReportMetric(float64(turn)/float64(time.Duration(slices.Max(benchWaits))*time.Millisecond), "x-slowest")
}

// benchStreamed is a library conversation on ConverseStream.
func benchStreamed(client converse.Client, reg *tools.Registry, early bool) benchChat {
	return benchConversation{converse.New(client, benchModelID, reg, func(o *converse.Options) {
		o.Stream = &converse.StreamPolicy{EarlyToolStart: early}
	})}
}

// benchSlowAsk is the reply that asks for calls: the calls, then a text
// of 48 runes, which ConverseStream sends in deltas of 4, an event each
// 3 ms.
func benchSlowAsk(calls []bedrocktest.Call) *bedrocktest.Reply {
	ask := bedrocktest.ToolUse("", calls...)
	msg := ask.Output.Output.(*types.ConverseOutputMemberMessage)
	msg.Value.Content = append(msg.Value.Content, &types.ContentBlockMemberText{Value: strings.Repeat("Wait. ", 8)})
	ask.Interval = 3 * time.Millisecond
	return ask
}

// benchGapClient sums, over a conversation's model calls after its first, the
// wall time from the last read from any connection of transport (the end of
// the previous response) to the call's start. That is the time a loop spends
// on the tool calls of a turn. Set first before each conversation.
type benchGapClient struct {
	converse.Client
	transport *benchTransport
	first     bool
	gaps      time.Duration
	n         int
}

func (c *benchGapClient) gap() {
	if !c.first {
		c.gaps += time.Since(benchEpoch) - time.Duration(c.transport.lastRead.Load())
		c.n++
	}
	c.first = false
}

func (c *benchGapClient) Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	c.gap()
	return c.Client.Converse(ctx, in, optFns...)
}

func (c *benchGapClient) ConverseStream(ctx context.Context, in *bedrockruntime.ConverseStreamInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseStreamOutput, error) {
	c.gap()
	return c.Client.ConverseStream(ctx, in, optFns...)
}

// benchStubClient answers like benchModel(1), without a network or an SDK:
// its two outputs were decoded by the SDK once. Until live is set it leaves
// nothing to measure but the loop; once set, calls go to the real client, so
// a long history can be built cheaply and then sent over loopback.
type benchStubClient struct {
	ask, answer *bedrockruntime.ConverseOutput
	real        converse.Client
	live        bool
}

func newBenchStubClient(b *testing.B, real *bedrockruntime.Client, reg *tools.Registry) *benchStubClient {
	b.Helper()
	cfg, err := (&converse.Executor{Registry: reg}).ToolConfig(nil)
	if err != nil {
		b.Fatal(err)
	}
	converseOnce := func(msgs ...types.Message) (*bedrockruntime.ConverseOutput, types.Message) {
		out, err := real.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(benchModelID), Messages: msgs, ToolConfig: cfg})
		if err != nil {
			b.Fatal(err)
		}
		msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
		if !ok {
			b.Fatalf("no message in %#v", out.Output)
		}
		return out, msg.Value
	}
	ask, asked := converseOnce(benchUserText("go"))
	answered := types.Message{Role: types.ConversationRoleUser, Content: naiveExecute(context.Background(), asked.Content)}
	answer, _ := converseOnce(benchUserText("go"), naiveEcho(asked), answered)
	return &benchStubClient{ask: ask, answer: answer, real: real}
}

func (s *benchStubClient) Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	if s.live {
		return s.real.Converse(ctx, in, optFns...)
	}
	last := in.Messages[len(in.Messages)-1]
	if _, ok := last.Content[0].(*types.ContentBlockMemberToolResult); ok {
		return s.answer, nil
	}
	return s.ask, nil
}

func (s *benchStubClient) ConverseStream(context.Context, *bedrockruntime.ConverseStreamInput, ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseStreamOutput, error) {
	return nil, errors.New("benchStubClient: no streams")
}

// BenchmarkHistoryGrowth measures one Send as the history grows. Each op is a
// conversation of turns model calls, in Sends of two turns (a round of two
// tool calls, then the answer). The metrics are those of its last Send, per
// turn: µs/turn, allocs/turn and B/turn. The earlier Sends build the history
// through the stub client. With client=loopback the last Send goes through the
// SDK to bedrocktest, which encode and decode the whole history every turn;
// with client=stub it stays on the stub, leaving the loop alone.
func BenchmarkHistoryGrowth(b *testing.B) {
	srv := bedrocktest.NewServer(benchModel(1))
	defer srv.Close()
	reg := benchRegistry(b)
	stub := newBenchStubClient(b, srv.Client(), reg)
	ctx := context.Background()
	for _, client := range []string{"loopback", "stub"} {
		for _, turns := range []int{2, 50, 100, 150, 200} {
			for _, impl := range benchImpls {
				b.Run(fmt.Sprintf("client=%s/turns=%d/impl=%s", client, turns, impl), func(b *testing.B) {
					var last time.Duration
					var before, after runtime.MemStats
					var allocs, bytes uint64
					for b.Loop() {
						stub.live = false
						chat := newBenchChat(b, impl, stub, reg)
						for send := 1; send <= turns/2; send++ {
							measured := send == turns/2
							if measured {
								stub.live = client == "loopback"
								runtime.ReadMemStats(&before)
							}
							start := time.Now()
							if err := chat.Send(ctx, "Add things."); err != nil {
								b.Fatal(err)
							}
							if measured {
								last += time.Since(start)
								runtime.ReadMemStats(&after)
								allocs += after.Mallocs - before.Mallocs
								bytes += after.TotalAlloc - before.TotalAlloc
							}
						}
					}
					// The op's own time mixes the stub's prefix with the
					// measured Send: it means nothing, so it is not printed.
					b.ReportMetric(0, "ns/op")
					perTurn := float64(2 * b.N)
					b.ReportMetric(benchMicros(last)/perTurn, "µs/turn")
					b.ReportMetric(float64(allocs)/perTurn, "allocs/turn")
					b.ReportMetric(float64(bytes)/perTurn, "B/turn")
				})
			}
		}
	}
}

// benchStreamEvents returns the ConverseStream events of a text answer cut
// into deltas pieces, in the wire form bedrocktest serves as they are.
func benchStreamEvents(deltas int, piece string) []recording.Event {
	ev := func(typ, payload string) recording.Event {
		return recording.Event{Type: typ, Payload: json.RawMessage(payload)}
	}
	events := []recording.Event{ev("messageStart", `{"role":"assistant"}`)}
	delta := ev("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"text":%q}}`, piece))
	for range deltas {
		events = append(events, delta)
	}
	return append(events,
		ev("contentBlockStop", `{"contentBlockIndex":0}`),
		ev("messageStop", `{"stopReason":"end_turn"}`),
		ev("metadata", `{"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15},"metrics":{"latencyMs":100}}`))
}

// benchStream runs one streamed turn with impl, calling onText with each
// text delta.
func benchStream(ctx context.Context, impl string, client converse.Client, onText func(string)) error {
	if impl == "library" {
		_, err := converse.New(client, benchModelID, nil, func(o *converse.Options) {
			o.Stream = &converse.StreamPolicy{}
			o.OnEvent = func(ev converse.Event) {
				if t, ok := ev.(converse.Text); ok {
					onText(t.Text)
				}
			}
		}).Send(ctx, "Talk.")

		return err
	}
	out, err := client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{
		ModelId:  aws.String(benchModelID),
		Messages: []types.Message{benchUserText("Talk.")},
	})
	if err != nil {
		return err
	}
	stream := out.GetStream()
	defer stream.Close()
	for ev := range stream.Events() {
		if d, ok := ev.(*types.ConverseStreamOutputMemberContentBlockDelta); ok {
			if t, ok := d.Value.Delta.(*types.ContentBlockDeltaMemberText); ok {
				onText(t.Value)
			}
		}
	}
	return stream.Err()
}

// BenchmarkStreamFirstDelta measures the time from the first text delta
// reaching the client's socket to the caller's callback. The server sends
// each event 5 ms after the one before, so the read that carries the first
// delta is the last read when its callback runs, and the turn is still far
// from over.
func BenchmarkStreamFirstDelta(b *testing.B) {
	reply := &bedrocktest.Reply{Events: benchStreamEvents(10, "Hello"), Interval: 5 * time.Millisecond}
	srv := bedrocktest.NewServer(bedrocktest.HandlerFunc(func(context.Context, *bedrocktest.Request) (*bedrocktest.Reply, error) {
		return reply, nil
	}))
	defer srv.Close()
	transport := newBenchTransport(2)
	defer transport.base.CloseIdleConnections()
	client := transport.client(srv)
	ctx := context.Background()
	for _, impl := range benchImpls {
		b.Run("impl="+impl, func(b *testing.B) {
			var latency time.Duration
			for b.Loop() {
				first := true
				err := benchStream(ctx, impl, client, func(string) {
					if first {
						first = false
						latency += time.Since(benchEpoch) - time.Duration(transport.lastRead.Load())
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(benchMicros(latency)/float64(b.N), "µs-to-callback")
		})
	}
}

// BenchmarkStreamEvents streams a turn of 1,000 text deltas as fast as the
// server writes them: ns/event and allocs/event, SDK and server included.
func BenchmarkStreamEvents(b *testing.B) {
	const deltas = 1000
	reply := &bedrocktest.Reply{Events: benchStreamEvents(deltas, "word")}
	srv := bedrocktest.NewServer(bedrocktest.HandlerFunc(func(context.Context, *bedrocktest.Request) (*bedrocktest.Reply, error) {
		return reply, nil
	}))
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()
	events := float64(len(reply.Events))
	for _, impl := range benchImpls {
		b.Run(fmt.Sprintf("deltas=%d/impl=%s", deltas, impl), func(b *testing.B) {
			var got int
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			for b.Loop() {
				if err := benchStream(ctx, impl, client, func(string) { got++ }); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if got != deltas*b.N {
				b.Fatalf("%d deltas, want %d", got, deltas*b.N)
			}
			ops := float64(b.N)
			b.ReportMetric(float64(elapsed.Nanoseconds())/ops/events, "ns/event")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/ops/events, "allocs/event")
		})
	}
}
