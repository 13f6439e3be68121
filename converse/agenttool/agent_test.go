package agenttool_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/modelinfo"
	"github.com/tooluse/bedrock/tools"
)

const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

// server serves one agent's script; each reply uses 10 input and 5
// output tokens.
func server(t *testing.T, replies ...*bedrocktest.Reply) *bedrocktest.Server {
	t.Helper()
	srv := bedrocktest.NewServer(bedrocktest.Script(replies...))
	t.Cleanup(srv.Close)
	return srv
}

// counted is a tool named name that counts its runs.
func counted(t *testing.T, name string, runs *atomic.Int32) *tools.Tool {
	t.Helper()
	tool, err := tools.New(name, "Looks something up.", func(context.Context, struct{}) (string, error) {
		runs.Add(1)
		return "found", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func registry(t *testing.T, ts ...*tools.Tool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(ts...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// agent makes the tool of an agent named name on srv with the tools reg.
func agent(t *testing.T, name string, srv *bedrocktest.Server, reg *tools.Registry, optFns ...func(*agenttool.Agent)) *tools.Tool {
	t.Helper()
	a := agenttool.Agent{Name: name, Description: "Does research.", Client: srv.Client(), Model: model, System: "You are " + name + ".", Tools: reg}
	for _, fn := range optFns {
		fn(&a)
	}
	tool, err := agenttool.New(a)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// delegate is a reply that calls the agent name with a task.
func delegate(id, name string) *bedrocktest.Reply {
	return bedrocktest.ToolUse("", bedrocktest.Call{ID: id, Name: name, Input: map[string]any{"task": "find it"}})
}

func lookup(id string) *bedrocktest.Reply {
	return bedrocktest.ToolUse("looking", bedrocktest.Call{ID: id, Name: "lookup"})
}

// lastResult is the text of the last tool result srv was sent.
func lastResult(t *testing.T, srv *bedrocktest.Server) string {
	t.Helper()
	reqs := srv.Requests()
	msgs := reqs[len(reqs)-1].Messages
	for _, b := range msgs[len(msgs)-1].Content {
		if r, ok := b.(*types.ContentBlockMemberToolResult); ok {
			var sb strings.Builder
			for _, c := range r.Value.Content {
				if tb, ok := c.(*types.ToolResultContentBlockMemberText); ok {
					sb.WriteString(tb.Value)
				}
			}
			return sb.String()
		}
	}
	t.Fatal("the last request answers no tool")
	return ""
}

func TestAgentUsageRollsUp(t *testing.T) {
	var runs atomic.Int32
	inner := server(t, lookup("i1"), bedrocktest.Text("It is 42."))
	outer := server(t, delegate("o1", "researcher"), bedrocktest.Text("The answer is 42."))
	reg := registry(t, agent(t, "researcher", inner, registry(t, counted(t, "lookup", &runs))))
	conv := converse.New(outer.Client(), model, reg)
	res, err := conv.Send(context.Background(), "What is the answer?")
	if err != nil {
		t.Fatal(err)
	}
	// Two outer turns and two inner ones, of 10 input and 5 output tokens each.
	want := converse.Usage{InputTokens: 40, OutputTokens: 20, TotalTokens: 60}
	if res.Usage != want || conv.State().Usage != want {
		t.Errorf("Result.Usage = %+v, State.Usage = %+v, want %+v", res.Usage, conv.State().Usage, want)
	}
	if res.Turns != 2 {
		t.Errorf("Turns = %d, want the outer model calls, 2", res.Turns)
	}
	p, _ := modelinfo.PricesOf(model)
	if res.CostUSD == nil || math.Abs(*res.CostUSD-want.Cost(p)) > 1e-12 {
		t.Errorf("CostUSD = %v, want %v", res.CostUSD, want.Cost(p))
	}
	if got := lastResult(t, outer); !strings.Contains(got, "It is 42.") {
		t.Errorf("the coordinator got %q, want the agent's answer", got)
	}
	if runs.Load() != 1 {
		t.Errorf("lookup ran %d times, want 1", runs.Load())
	}
}

func TestAgentStoppedByCallerBudget(t *testing.T) {
	var runs atomic.Int32
	inner := server(t, lookup("i1"), lookup("i2"), bedrocktest.Text("It is 42."))
	outer := server(t, delegate("o1", "researcher"), bedrocktest.Text("unreached"))
	reg := registry(t, agent(t, "researcher", inner, registry(t, counted(t, "lookup", &runs))))
	// The coordinator's first turn leaves 5 output tokens: the agent's
	// first turn spends them, and its second is never made.
	conv := converse.New(outer.Client(), model, reg, func(o *converse.Options) {
		o.Budget = &converse.Budget{Send: converse.Limits{OutputTokens: 10}}
	})
	res, err := conv.Send(context.Background(), "What is the answer?")
	if !errors.Is(err, converse.ErrBudget) {
		t.Fatalf("err = %v, want the coordinator's budget reached", err)
	}
	if res.Usage.OutputTokens != 10 {
		t.Errorf("OutputTokens = %d, want 10: the coordinator's turn and the agent's", res.Usage.OutputTokens)
	}
	if n := len(inner.Requests()); n != 1 || runs.Load() != 1 {
		t.Errorf("the agent made %d model calls and %d tool calls, want 1 and 1", n, runs.Load())
	}
	if n := len(outer.Requests()); n != 1 {
		t.Errorf("the coordinator made %d model calls, want 1", n)
	}
	// The call was answered with what the agent had, and that it stopped.
	got := resultOf(t, conv.History())
	if !strings.Contains(got, "looking") || !strings.Contains(got, "stopped") || !strings.Contains(got, "output tokens") {
		t.Errorf("the call's result is %q, want the agent's text and why it stopped", got)
	}
}

// resultOf is the text of the last tool result of history.
func resultOf(t *testing.T, history []types.Message) string {
	t.Helper()
	for i := len(history) - 1; i >= 0; i-- {
		for _, b := range history[i].Content {
			if r, ok := b.(*types.ContentBlockMemberToolResult); ok {
				return toolResultText(r.Value)
			}
		}
	}
	t.Fatal("no tool result in the history")
	return ""
}

func toolResultText(r types.ToolResultBlock) string {
	var sb strings.Builder
	for _, c := range r.Content {
		if tb, ok := c.(*types.ToolResultContentBlockMemberText); ok {
			sb.WriteString(tb.Value)
		}
	}
	return sb.String()
}

// TestAgentsNestTwoLevels: a coordinator calls an agent that calls another;
// the usage of both reaches the coordinator's Result, and each agent's
// invoke_agent span is a child of the execute_tool span of its call.
func TestAgentsNestTwoLevels(t *testing.T) {
	var runs atomic.Int32
	coder := server(t, lookup("c1"), bedrocktest.Text("Coded."))
	researcher := server(t, delegate("r1", "coder"), bedrocktest.Text("Researched."))
	outer := server(t, delegate("o1", "researcher"), bedrocktest.Text("Done."))
	coderTool := agent(t, "coder", coder, registry(t, counted(t, "lookup", &runs)))
	reg := registry(t, agent(t, "researcher", researcher, registry(t, coderTool)))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	conv := converse.New(outer.Client(), model, reg, func(o *converse.Options) { o.Telemetry.TracerProvider = tp })
	res, err := conv.Send(context.Background(), "Build it.")
	if err != nil {
		t.Fatal(err)
	}
	if want := (converse.Usage{InputTokens: 60, OutputTokens: 30, TotalTokens: 90}); res.Usage != want {
		t.Errorf("Usage = %+v, want the six turns' %+v", res.Usage, want)
	}
	if got := resultOf(t, res.History); !strings.Contains(got, "Researched.") {
		t.Errorf("the coordinator got %q", got)
	}
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byID[s.SpanContext().SpanID().String()] = s
	}
	for _, name := range []string{"researcher", "coder"} {
		agentSpan := find(t, spans.Ended(), "invoke_agent "+name)
		if got := attr(agentSpan, "gen_ai.agent.name"); got != name {
			t.Errorf("%s: gen_ai.agent.name = %q", agentSpan.Name(), got)
		}
		parent, ok := byID[agentSpan.Parent().SpanID().String()]
		if !ok || parent.Name() != "execute_tool "+name {
			t.Errorf("the parent of %s is %v, want execute_tool %s", agentSpan.Name(), parent, name)
		}
	}
	if coderCall := find(t, spans.Ended(), "execute_tool coder"); byID[coderCall.Parent().SpanID().String()].Name() != "invoke_agent researcher" {
		t.Error("the coder's call is not a child of the researcher's invoke_agent span")
	}
}

func find(t *testing.T, spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	t.Fatalf("no span %q", name)
	return nil
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsString()
		}
	}
	return ""
}

// TestAgentResumesAfterCrash: the call is cut off while the agent's second
// tool runs. Run again with the same toolUseId, as an engine retries a
// call, it resumes the agent's conversation from its store. No call runs
// twice, and the agent's model is not asked again what it answered.
func TestAgentResumesAfterCrash(t *testing.T) {
	var lookups, slows atomic.Int32
	started := make(chan struct{})
	slow, err := tools.New("slow", "Takes long.", func(ctx context.Context, _ struct{}) (string, error) {
		if slows.Add(1) == 1 {
			close(started)
		}
		<-ctx.Done()
		return "", ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	inner := server(t, lookup("i1"), bedrocktest.ToolUse("", bedrocktest.Call{ID: "i2", Name: "slow"}), bedrocktest.Text("It is 42."))
	store := &filestore.Store{Dir: t.TempDir()}
	tool := agent(t, "researcher", inner, registry(t, counted(t, "lookup", &lookups), slow), func(a *agenttool.Agent) { a.Store = store })
	exec := converse.NewExecutor(model, registry(t, tool))
	call := converse.Call{ID: "o1", Tool: "researcher", Input: json.RawMessage(`{"task":"find it"}`)}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	first := exec.Run(ctx, call)
	if r := first.Result.(*types.ContentBlockMemberToolResult).Value; r.Status != types.ToolResultStatusError {
		t.Fatalf("the cut-off call answered %q, want an error", toolResultText(r))
	}
	// The executor answered at the cancellation; the agent's conversation
	// ends, and lets its session go, when its tool returns. A crashed
	// process would hold nothing.
	for exec.Abandoned() > 0 {
		time.Sleep(time.Millisecond)
	}
	second := exec.Run(context.Background(), call)
	if got := toolResultText(second.Result.(*types.ContentBlockMemberToolResult).Value); !strings.Contains(got, "It is 42.") {
		t.Errorf("the call run again answered %q, want the agent's answer", got)
	}
	if second.Usage.TotalTokens == 0 {
		t.Error("Executor.Run returned none of the agent's usage")
	}
	if lookups.Load() != 1 || slows.Load() != 1 {
		t.Errorf("lookup ran %d times and slow %d, want each once", lookups.Load(), slows.Load())
	}
	if n := len(inner.Requests()); n != 3 {
		t.Errorf("the agent's model was called %d times, want 3", n)
	}
}

// crashStore is a Store whose saves are lost after crash, until revive,
// as a process that died makes none.
type crashStore struct {
	converse.Store
	mu   sync.Mutex
	dead bool
}

func (s *crashStore) Save(ctx context.Context, id string, st *converse.State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return nil
	}
	return s.Store.Save(ctx, id, st)
}

func (s *crashStore) setDead(dead bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dead = dead
}

// TestAgentResumesWithCaller: the process dies while the agent's second
// tool runs; the coordinator, restored from its session and resumed, runs
// the agent's call again, which resumes the agent's conversation from the
// session beside the coordinator's: no call runs twice.
func TestAgentResumesWithCaller(t *testing.T) {
	var lookups, slows atomic.Int32
	started := make(chan struct{})
	store := &crashStore{Store: &filestore.Store{Dir: t.TempDir()}}
	slow, err := tools.New("slow", "Takes long.", func(ctx context.Context, _ struct{}) (string, error) {
		if slows.Add(1) == 1 {
			store.setDead(true) // the process dies here
			close(started)
		}
		<-ctx.Done()
		return "", ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	inner := server(t, lookup("i1"), bedrocktest.ToolUse("", bedrocktest.Call{ID: "i2", Name: "slow"}), bedrocktest.Text("It is 42."))
	outer := server(t, delegate("o1", "researcher"), bedrocktest.Text("Done."))
	reg := registry(t, agent(t, "researcher", inner, registry(t, counted(t, "lookup", &lookups), slow)))
	session := func(o *converse.Options) { o.Session = &converse.Session{Store: store, ID: "coordinator"} }
	conv := converse.New(outer.Client(), model, reg, session)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	if _, err := conv.Send(ctx, "What is the answer?"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the cancellation", err)
	}
	for conv.Executor().Abandoned() > 0 { // a dead process would run nothing
		time.Sleep(time.Millisecond)
	}
	store.setDead(false)

	st, err := store.Load(context.Background(), "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	restored, err := converse.Restore(outer.Client(), reg, st, session)
	if err != nil {
		t.Fatal(err)
	}
	res, err := restored.Resume(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := resultOf(t, res.History); res.Text != "Done." || !strings.Contains(got, "It is 42.") {
		t.Errorf("the coordinator answered %q on the agent's %q", res.Text, got)
	}
	if lookups.Load() != 1 || slows.Load() != 1 {
		t.Errorf("lookup ran %d times and slow %d, want each once", lookups.Load(), slows.Load())
	}
	if n, m := len(inner.Requests()), len(outer.Requests()); n != 3 || m != 2 {
		t.Errorf("the agent's model was called %d times and the coordinator's %d, want 3 and 2", n, m)
	}
	// The Resume's usage: the agent's last turn and the coordinator's.
	if res.Usage.InputTokens != 20 {
		t.Errorf("Resume's InputTokens = %d, want 20", res.Usage.InputTokens)
	}
}

// TestStructuredAgent: a typed agent gets its input as JSON and answers
// with a typed value, which the coordinator gets as the call's result.
func TestStructuredAgent(t *testing.T) {
	type city struct {
		Name string `json:"name"`
	}
	type facts struct {
		Population int `json:"population"`
	}
	inner := server(t, bedrocktest.Text(`{"population": 2100000}`))
	outer := server(t, bedrocktest.ToolUse("", bedrocktest.Call{ID: "o1", Name: "census", Input: map[string]any{"name": "Paris"}}), bedrocktest.Text("Done."))
	census, err := agenttool.NewStructured[city, facts](agenttool.Agent{Name: "census", Description: "Counts people.", Client: inner.Client(), Model: model})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := converse.New(outer.Client(), model, registry(t, census)).Send(context.Background(), "How many?"); err != nil {
		t.Fatal(err)
	}
	if got := lastResult(t, outer); got != `{"population":2100000}` {
		t.Errorf("the coordinator got %s", got)
	}
	prompt := inner.Requests()[0].Messages[0].Content[0].(*types.ContentBlockMemberText).Value
	if prompt != `{"name":"Paris"}` {
		t.Errorf("the agent was asked %q, want its input as JSON", prompt)
	}
}

func TestNewRejectsIncompleteAgent(t *testing.T) {
	srv := server(t)
	for _, a := range []agenttool.Agent{
		{Client: srv.Client(), Model: model},
		{Name: "a", Model: model},
		{Name: "a", Client: srv.Client()},
	} {
		if _, err := agenttool.New(a); !errors.Is(err, agenttool.ErrInvalidAgent) {
			t.Errorf("New(%+v) = %v, want ErrInvalidAgent", a, err)
		}
	}
}

// TestAgentKeepsConversation: with Keep, the coordinator's second call
// continues the agent's conversation of the first, in memory or in the
// coordinator's Store.
func TestAgentKeepsConversation(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "store"}[stored], func(t *testing.T) {
			inner := server(t, bedrocktest.Text("First answer."), bedrocktest.Text("Second answer."))
			outer := server(t, delegate("o1", "researcher"), delegate("o2", "researcher"), bedrocktest.Text("Done."))
			reg := registry(t, agent(t, "researcher", inner, nil, func(a *agenttool.Agent) { a.Keep = true }))
			dir := t.TempDir()
			conv := converse.New(outer.Client(), model, reg, func(o *converse.Options) {
				if stored {
					o.Session = &converse.Session{Store: &filestore.Store{Dir: dir}, ID: "coordinator"}
				}
			})
			if _, err := conv.Send(context.Background(), "Ask twice."); err != nil {
				t.Fatal(err)
			}
			reqs := inner.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the agent's model was called %d times, want 2", len(reqs))
			}
			if got := reqs[1].Messages; len(got) != 3 || message.Text(got[1]) != "First answer." {
				t.Errorf("the second call sent %d messages, want the first task, its answer and the second task", len(got))
			}
			if _, err := os.Stat(filepath.Join(dir, "coordinator.researcher")); stored && err != nil {
				t.Errorf("the kept conversation is not in the Store: %v", err)
			}
		})
	}
}
