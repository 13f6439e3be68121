package converse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/tools"
)

type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// testTools is a registry of tools that succeed and fail in every way, and
// counts how often "add" really ran.
func testTools(t testing.TB, calls *atomic.Int32) *tools.Registry {
	t.Helper()
	mk := func(tool *tools.Tool, err error) *tools.Tool {
		t.Helper()
		require.NoError(t, err)
		return tool
	}
	reg, err := tools.NewRegistry(
		mk(tools.New("add", "Adds a and b.", func(_ context.Context, in addIn) (float64, error) {
			if calls != nil {
				calls.Add(1)
			}
			return in.A + in.B, nil
		})),
		mk(tools.New("fail", "Always fails.", func(context.Context, struct{}) (string, error) {
			return "", errors.New("boom: the disk is full")
		})),
		mk(tools.New("panic", "Always panics.", func(context.Context, struct{}) (string, error) {
			panic("kaboom")
		})),
		mk(tools.New("hang", "Waits for its context.", func(ctx context.Context, _ struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}, func(o *tools.Options) { o.Timeout = 50 * time.Millisecond })),
		mk(tools.New("stubborn", "Ignores its context.", func(context.Context, struct{}) (string, error) {
			time.Sleep(300 * time.Millisecond)
			return "late", nil
		}, func(o *tools.Options) { o.Timeout = 50 * time.Millisecond })),
		mk(tools.New("nan", "Returns NaN.", func(context.Context, struct{}) (float64, error) {
			return math.NaN(), nil
		})),
		mk(tools.New("chan", "Returns a channel.", func(context.Context, struct{}) (chan int, error) {
			return make(chan int), nil
		})),
		mk(tools.NewRaw("echo", "Echoes its input.", json.RawMessage(`{"type":"object"}`),
			func(_ context.Context, in json.RawMessage) (any, error) { return in, nil })),
		mk(tools.New("greet", "Says hello.", func(context.Context, struct{}) (string, error) {
			return "hello", nil
		})),
		mk(tools.New("typed_nil", "Returns a nil *nilError as its error.", func(context.Context, struct{}) (string, error) {
			var err *nilError
			return "", err
		})),
		mk(tools.New("bad_json", "Returns output whose MarshalJSON panics.", func(context.Context, struct{}) (badJSON, error) {
			return badJSON{}, nil
		})),
	)
	require.NoError(t, err)
	return reg
}

// nilError dereferences its receiver: a nil *nilError returned as an error
// panics when its text is read.
type nilError struct{ msg string }

func (e *nilError) Error() string { return e.msg }

// badJSON panics when it is encoded.
type badJSON struct{}

func (badJSON) MarshalJSON() ([]byte, error) { panic("no JSON today") }

func toolUse(id, name string, input any) types.ContentBlock {
	return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
		ToolUseId: aws.String(id), Name: aws.String(name), Input: document.NewLazyDocument(input),
	}}
}

func text(s string) types.ContentBlock { return &types.ContentBlockMemberText{Value: s} }

type result struct {
	ID, Text string
	Status   types.ToolResultStatus
}

func results(t testing.TB, blocks []types.ContentBlock) []result {
	t.Helper()
	var out []result
	for _, b := range blocks {
		tr, ok := b.(*types.ContentBlockMemberToolResult)
		require.True(t, ok, "not a toolResult: %T", b)
		require.Len(t, tr.Value.Content, 1)
		txt, ok := tr.Value.Content[0].(*types.ToolResultContentBlockMemberText)
		require.True(t, ok, "not text: %T", tr.Value.Content[0])
		out = append(out, result{ID: aws.ToString(tr.Value.ToolUseId), Text: txt.Value, Status: tr.Value.Status})
	}
	return out
}

// manyCalls returns n add calls, r0 to r(n-1), then repeats of the ids.
func manyCalls(n int, repeats ...string) []types.ContentBlock {
	var content []types.ContentBlock
	for i := range n {
		content = append(content, toolUse(fmt.Sprintf("r%d", i), "add", map[string]any{"a": i, "b": 1}))
	}
	for _, id := range repeats {
		content = append(content, toolUse(id, "add", map[string]any{"a": 0, "b": 0}))
	}
	return content
}

func TestExecute(t *testing.T) {
	ab := map[string]any{"a": 10, "b": 10}
	tests := []struct {
		name    string
		content []types.ContentBlock
		want    []result
		// wantContains checks error texts by substring, per result.
		wantContains []string
		addCalls     int32
	}{
		{name: "no tool use", content: []types.ContentBlock{text("Hello")}},
		{name: "nil content"},
		{
			name:     "text around one call",
			content:  []types.ContentBlock{text("Let me add."), toolUse("t1", "add", ab), text("...")},
			want:     []result{{"t1", "20", "success"}},
			addCalls: 1,
		},
		{
			name: "two calls answered by id, in order",
			content: []types.ContentBlock{text("Two sums."),
				toolUse("AB3", "add", map[string]any{"a": 10, "b": 10}),
				toolUse("PO9", "add", map[string]any{"a": 30, "b": 30})},
			want:     []result{{"AB3", "20", "success"}, {"PO9", "60", "success"}},
			addCalls: 2,
		},
		{
			name:     "ids with dots and colons",
			content:  []types.ContentBlock{toolUse("functions.add:0", "add", ab), toolUse("functions.add:1", "add", ab)},
			want:     []result{{"functions.add:0", "20", "success"}, {"functions.add:1", "20", "success"}},
			addCalls: 2,
		},
		{
			name:         "unknown tool names itself and the available ones",
			content:      []types.ContentBlock{toolUse("u1", "weather", map[string]any{})},
			wantContains: []string{`unknown tool "weather"; available tools: add, fail, panic`},
		},
		{
			name:         "input not an object",
			content:      []types.ContentBlock{toolUse("i1", "add", []any{1, 2})},
			wantContains: []string{"not a JSON object"},
		},
		{
			name:         "input failing the schema is not run",
			content:      []types.ContentBlock{toolUse("s1", "add", map[string]any{"a": "ten"})},
			wantContains: []string{`"a"`},
		},
		{
			name:         "the tool's own error",
			content:      []types.ContentBlock{toolUse("f1", "fail", map[string]any{})},
			wantContains: []string{"boom: the disk is full"},
		},
		{
			name:         "panic",
			content:      []types.ContentBlock{toolUse("p1", "panic", map[string]any{})},
			wantContains: []string{`tool panicked: tool "panic": kaboom`},
		},
		{
			name:         "timeout of a tool that honours its context",
			content:      []types.ContentBlock{toolUse("h1", "hang", map[string]any{})},
			wantContains: []string{`tool "hang" timed out after 50ms`},
		},
		{
			name:         "timeout of a tool that ignores its context",
			content:      []types.ContentBlock{toolUse("h2", "stubborn", map[string]any{})},
			wantContains: []string{`tool "stubborn" timed out after 50ms`},
		},
		{
			name:         "NaN output",
			content:      []types.ContentBlock{toolUse("n1", "nan", map[string]any{})},
			wantContains: []string{`tool output is not JSON: tool "nan": unsupported value NaN`},
		},
		{
			name:         "channel output",
			content:      []types.ContentBlock{toolUse("c1", "chan", map[string]any{})},
			wantContains: []string{`tool output is not JSON: tool "chan": it holds a value JSON cannot represent`},
		},
		{
			name:         "typed nil error whose Error method panics",
			content:      []types.ContentBlock{toolUse("tn", "typed_nil", map[string]any{}), toolUse("ok", "add", ab)},
			wantContains: []string{`tool panicked: tool "typed_nil" while its error was read: runtime error`, ""},
			addCalls:     1,
		},
		{
			name:         "output whose MarshalJSON panics",
			content:      []types.ContentBlock{toolUse("bj", "bad_json", map[string]any{})},
			wantContains: []string{`tool panicked: tool "bad_json" while its output was encoded: no JSON today`},
		},
		{
			name:         "repeated id is answered once; the repeat is an error",
			content:      []types.ContentBlock{toolUse("d1", "add", ab), toolUse("d1", "add", ab)},
			wantContains: []string{"", `duplicate toolUseId: "d1"`},
			addCalls:     1,
		},
		{
			name:         "repeated ids among many calls",
			content:      manyCalls(20, "r3", "r19"),
			wantContains: append(slices.Repeat([]string{""}, 20), `duplicate toolUseId: "r3"`, `duplicate toolUseId: "r19"`),
			addCalls:     20,
		},
		{
			name: "one failure does not stop the others",
			content: []types.ContentBlock{toolUse("m1", "fail", map[string]any{}), toolUse("m2", "add", ab),
				toolUse("m3", "panic", map[string]any{}), toolUse("m4", "echo", map[string]any{"x": 1})},
			wantContains: []string{"boom", "", "kaboom", ""},
			addCalls:     1,
		},
		{
			name:    "raw JSON output is passed through",
			content: []types.ContentBlock{toolUse("e1", "echo", map[string]any{"x": []any{1, "y"}})},
			want:    []result{{"e1", `{"x":[1,"y"]}`, "success"}},
		},
		{
			name:    "missing input is an empty object",
			content: []types.ContentBlock{&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("g1"), Name: aws.String("greet")}}},
			want:    []result{{"g1", `"hello"`, "success"}},
		},
	}
	for _, tt := range tests {
		// In a synctest bubble the timeouts run in virtual time: "hang"
		// and "stubborn" time out at 50 ms, "stubborn" returns at 300 ms,
		// however busy the machine.
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				e := &converse.Executor{Registry: testTools(t, &calls)}
				got := results(t, e.Execute(context.Background(), tt.content))
				// An abandoned call ("stubborn") returns at 300 ms and
				// gives back its slot; the bubble ends with it.
				time.Sleep(time.Second)
				synctest.Wait()
				assert.Zero(t, e.Abandoned(), "calls still running")
				assert.Equal(t, tt.addCalls, calls.Load(), "times add ran")
				if tt.wantContains == nil {
					assert.Equal(t, tt.want, got)
					return
				}
				require.Len(t, got, len(tt.wantContains))
				for i, want := range tt.wantContains {
					if want == "" {
						assert.Equal(t, types.ToolResultStatusSuccess, got[i].Status, got[i].Text)
						continue
					}
					assert.Equal(t, types.ToolResultStatusError, got[i].Status)
					assert.True(t, strings.HasPrefix(got[i].Text, "Error: "), got[i].Text)
					assert.Contains(t, got[i].Text, want)
				}
			})
		})
	}
}

func TestExecutePanicStackGoesToLoggerNotModel(t *testing.T) {
	var logs bytes.Buffer
	e := &converse.Executor{Registry: testTools(t, nil), Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	got := results(t, e.Execute(context.Background(), []types.ContentBlock{toolUse("p", "panic", map[string]any{})}))
	require.Len(t, got, 1)
	assert.NotContains(t, got[0].Text, "goroutine")
	assert.Contains(t, logs.String(), "kaboom")
	assert.Contains(t, logs.String(), "goroutine")
}

// TestExecuteCancelled: calls running when the context is cancelled end as
// cancelled. In virtual time the cancel at 20 ms comes when both calls are
// waiting on their context, never before they started.
func TestExecuteCancelled(t *testing.T) { synctest.Test(t, testExecuteCancelled) }

func testExecuteCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	e := &converse.Executor{Registry: testTools(t, nil), ToolOptions: converse.ToolOptions{Timeout: time.Minute}}
	time.AfterFunc(20*time.Millisecond, cancel)
	hang, err := tools.New("wait", "Waits.", func(ctx context.Context, _ struct{}) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	require.NoError(t, err)
	require.NoError(t, e.Registry.Add(hang))
	got := results(t, e.Execute(ctx, []types.ContentBlock{toolUse("w1", "wait", map[string]any{}), toolUse("w2", "wait", map[string]any{})}))
	require.Len(t, got, 2)
	for _, r := range got {
		assert.Equal(t, types.ToolResultStatusError, r.Status)
		assert.Contains(t, r.Text, `tool "wait" was cancelled`)
	}
	// Calls that start after cancellation do not run at all.
	var calls atomic.Int32
	e.Registry = testTools(t, &calls)
	got = results(t, e.Execute(ctx, []types.ContentBlock{toolUse("a", "add", map[string]any{"a": 1, "b": 2})}))
	assert.Contains(t, got[0].Text, "cancelled")
	assert.Zero(t, calls.Load())
}

func TestExecuteWithoutStatus(t *testing.T) {
	e := &converse.Executor{Registry: testTools(t, nil), ToolOptions: converse.ToolOptions{Status: aws.Bool(false)}}
	got := results(t, e.Execute(context.Background(), []types.ContentBlock{
		toolUse("a", "add", map[string]any{"a": 1, "b": 2}), toolUse("f", "fail", map[string]any{})}))
	assert.Equal(t, []result{{"a", "3", ""}, {"f", "Error: boom: the disk is full", ""}}, got)
}

func TestExecuteJSONContent(t *testing.T) {
	e := &converse.Executor{Registry: testTools(t, nil), ToolOptions: converse.ToolOptions{JSONContent: true}}
	blocks := e.Execute(context.Background(), []types.ContentBlock{
		toolUse("obj", "echo", map[string]any{"x": 1}),
		toolUse("num", "add", map[string]any{"a": 1, "b": 2}),
		toolUse("err", "fail", map[string]any{}),
	})
	require.Len(t, blocks, 3)
	want := []string{`{"x":1}`, `{"result":3}`}
	for i, w := range want {
		tr := blocks[i].(*types.ContentBlockMemberToolResult)
		j, ok := tr.Value.Content[0].(*types.ToolResultContentBlockMemberJson)
		require.True(t, ok, "%T", tr.Value.Content[0])
		b, err := j.Value.MarshalSmithyDocument()
		require.NoError(t, err)
		assert.JSONEq(t, w, string(b))
	}
	tr := blocks[2].(*types.ContentBlockMemberToolResult)
	assert.IsType(t, &types.ToolResultContentBlockMemberText{}, tr.Value.Content[0], "errors stay text")
	assert.Equal(t, types.ToolResultStatusError, tr.Value.Status)
}

func TestExecuteEvents(t *testing.T) {
	var events []converse.Event
	e := &converse.Executor{Registry: testTools(t, nil), OnEvent: func(ev converse.Event) { events = append(events, ev) }}
	e.Execute(context.Background(), []types.ContentBlock{
		toolUse("a", "add", map[string]any{"a": 1, "b": 2}), toolUse("f", "fail", map[string]any{})})
	var starts, ends []string
	for _, ev := range events {
		switch ev := ev.(type) {
		case converse.ToolStart:
			starts = append(starts, ev.ID)
		case converse.ToolEnd:
			ends = append(ends, ev.ID)
			if ev.ID == "a" {
				assert.JSONEq(t, "3", string(ev.Output))
				assert.NoError(t, ev.Err)
				assert.JSONEq(t, `{"a":1,"b":2}`, string(ev.Input))
			} else {
				assert.Nil(t, ev.Output)
				assert.ErrorContains(t, ev.Err, "boom")
				assert.Equal(t, types.ToolResultStatusError, ev.Status)
			}
		}
	}
	assert.ElementsMatch(t, []string{"a", "f"}, starts)
	assert.ElementsMatch(t, []string{"a", "f"}, ends)
}

func TestExecuteErrorsAreTestable(t *testing.T) { synctest.Test(t, testExecuteErrorsAreTestable) }

func testExecuteErrorsAreTestable(t *testing.T) {
	var mu sync.Mutex
	errs := map[string]error{}
	e := &converse.Executor{Registry: testTools(t, nil), OnEvent: func(ev converse.Event) {
		if end, ok := ev.(converse.ToolEnd); ok {
			mu.Lock()
			errs[end.ID] = end.Err
			mu.Unlock()
		}
	}}
	e.Execute(context.Background(), []types.ContentBlock{
		toolUse("unknown", "nope", map[string]any{}),
		toolUse("input", "add", map[string]any{"a": "x"}),
		toolUse("panic", "panic", map[string]any{}),
		toolUse("output", "nan", map[string]any{}),
		toolUse("timeout", "hang", map[string]any{}),
	})
	assert.ErrorIs(t, errs["unknown"], converse.ErrUnknownTool)
	assert.ErrorIs(t, errs["input"], tools.ErrInvalidInput)
	var ie *tools.InputError
	assert.ErrorAs(t, errs["input"], &ie)
	assert.ErrorIs(t, errs["panic"], converse.ErrToolPanic)
	assert.ErrorIs(t, errs["output"], converse.ErrToolOutput)
	assert.ErrorIs(t, errs["timeout"], context.DeadlineExceeded)
}

// TestExecuteConcurrencyLimit proves the bound with a high-water mark: every
// call waits until the limit is reached once, so the mark must equal the
// limit exactly, without sleeps.
func TestExecuteConcurrencyLimit(t *testing.T) {
	for _, limit := range []int{1, 2, 4, 8} {
		t.Run("", func(t *testing.T) {
			var active, high atomic.Int32
			reached := make(chan struct{})
			var once sync.Once
			tool, err := tools.New("work", "Works.", func(ctx context.Context, _ struct{}) (int, error) {
				n := active.Add(1)
				defer active.Add(-1)
				for {
					h := high.Load()
					if n <= h || high.CompareAndSwap(h, n) {
						break
					}
				}
				if n == int32(limit) {
					once.Do(func() { close(reached) })
				}
				select {
				case <-reached:
				case <-ctx.Done():
				}
				return int(n), nil
			})
			require.NoError(t, err)
			reg, err := tools.NewRegistry(tool)
			require.NoError(t, err)
			var content []types.ContentBlock
			for i := range 20 {
				content = append(content, toolUse(string(rune('a'+i)), "work", map[string]any{}))
			}
			e := &converse.Executor{Registry: reg, ToolOptions: converse.ToolOptions{Concurrency: limit, Timeout: 10 * time.Second}}
			for _, r := range results(t, e.Execute(context.Background(), content)) {
				assert.Equal(t, types.ToolResultStatusSuccess, r.Status, r.Text)
			}
			assert.Equal(t, int32(limit), high.Load())
		})
	}
}

// TestExecuteRunsCallsConcurrently: 8 calls that each wait for all 8 to
// have started can only succeed if they run at once.
func TestExecuteRunsCallsConcurrently(t *testing.T) {
	var started sync.WaitGroup
	started.Add(8)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	barrier, err := tools.New("barrier", "Waits for the others.", func(ctx context.Context, _ struct{}) (string, error) {
		started.Done()
		select {
		case <-all:
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(barrier)
	require.NoError(t, err)
	var content []types.ContentBlock
	for i := range 8 {
		content = append(content, toolUse(string(rune('a'+i)), "barrier", map[string]any{}))
	}
	// The timeout is a failsafe: calls run one after another would wait for
	// it, and fail.
	exec := &converse.Executor{Registry: reg, ToolOptions: converse.ToolOptions{Timeout: 30 * time.Second}}
	got := results(t, exec.Execute(context.Background(), content))
	require.Len(t, got, 8)
	for _, r := range got {
		assert.Equal(t, `"done"`, r.Text)
	}
}

// TestExecuteTypedNilError: a typed-nil error a tool returns cannot panic
// the caller, nor a listener whose OnEvent reads the error.
func TestExecuteTypedNilError(t *testing.T) {
	tool, err := tools.New("typed_nil", "Returns a nil *nilError.", func(context.Context, struct{}) (string, error) {
		var err *nilError
		return "", err
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(tool)
	require.NoError(t, err)
	var texts []string
	e := &converse.Executor{Registry: reg, OnEvent: func(ev converse.Event) {
		if end, ok := ev.(converse.ToolEnd); ok {
			texts = append(texts, end.Err.Error()) // what a listener does with it
		}
	}}
	got := results(t, e.Execute(context.Background(), []types.ContentBlock{toolUse("1", "typed_nil", map[string]any{})}))
	require.Len(t, got, 1)
	assert.Equal(t, types.ToolResultStatusError, got[0].Status)
	assert.Contains(t, got[0].Text, "while its error was read")
	assert.Len(t, texts, 1)
}

// stuckTool ignores its context: it returns only when release is closed. It
// keeps a high-water mark of the calls running at once.
func stuckTool(t testing.TB, timeout time.Duration, release <-chan struct{}, high *atomic.Int32) *tools.Tool {
	t.Helper()
	var active atomic.Int32
	tool, err := tools.New("stuck", "Ignores its context.", func(context.Context, struct{}) (string, error) {
		n := active.Add(1)
		defer active.Add(-1)
		for h := high.Load(); n > h && !high.CompareAndSwap(h, n); h = high.Load() {
		}
		<-release
		return "finally", nil
	}, func(o *tools.Options) { o.Timeout = timeout })
	require.NoError(t, err)
	return tool
}

// TestExecuteAbandonedCallsKeepTheirSlot: at Concurrency 1, a call abandoned
// at its timeout still holds the only slot, so the calls after it are
// answered as timed out waiting, naming it, and never run beside it. The
// timeouts run in virtual time; once released, the abandoned call has given
// back its slot when every goroutine of the bubble is idle again.
func TestExecuteAbandonedCallsKeepTheirSlot(t *testing.T) {
	synctest.Test(t, testExecuteAbandonedCallsKeepTheirSlot)
}

func testExecuteAbandonedCallsKeepTheirSlot(t *testing.T) {
	release := make(chan struct{})
	var high atomic.Int32
	reg, err := tools.NewRegistry(stuckTool(t, 20*time.Millisecond, release, &high))
	require.NoError(t, err)
	var logs bytes.Buffer
	abandoned := map[string]bool{}
	e := &converse.Executor{Registry: reg, ToolOptions: converse.ToolOptions{Concurrency: 1}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnEvent: func(ev converse.Event) {
			if end, ok := ev.(converse.ToolEnd); ok {
				abandoned[end.ID] = end.Abandoned
			}
		}}
	got := results(t, e.Execute(context.Background(), []types.ContentBlock{
		toolUse("s1", "stuck", map[string]any{}), toolUse("s2", "stuck", map[string]any{}), toolUse("s3", "stuck", map[string]any{})}))
	require.Len(t, got, 3)
	assert.Equal(t, `Error: tool "stuck" timed out after 20ms: context deadline exceeded`, got[0].Text)
	for _, r := range got[1:] {
		assert.Equal(t, `Error: tool "stuck" timed out after 20ms waiting for a free slot, all held by `+
			`tool "stuck" (toolUseId "s1", answered already and still running): context deadline exceeded`, r.Text)
	}
	assert.Equal(t, map[string]bool{"s1": true, "s2": false, "s3": false}, abandoned)
	assert.Equal(t, 1, e.Abandoned())
	assert.Contains(t, logs.String(), "abandoned")
	assert.Contains(t, logs.String(), "toolUseId=s1")

	close(release)
	synctest.Wait()
	require.Zero(t, e.Abandoned(), "the abandoned call gave back its slot")
	assert.Equal(t, int32(1), high.Load(), "calls ran beside each other")
	got = results(t, e.Execute(context.Background(), []types.ContentBlock{toolUse("s4", "stuck", map[string]any{})}))
	assert.Equal(t, []result{{"s4", `"finally"`, types.ToolResultStatusSuccess}}, got, "the slot is free again")
}

// TestExecuteOutputLimit: output past the limit is cut, marked, sent as
// text (also in JSON mode), and reported in ToolEnd.
func TestExecuteOutputLimit(t *testing.T) {
	long := strings.Repeat("é", 10) // 20 bytes, 22 as JSON
	say, err := tools.New("say", "Returns 10 é.", func(context.Context, struct{}) (string, error) { return long, nil })
	require.NoError(t, err)
	fail, err := tools.New("fail", "Fails at length.", func(context.Context, struct{}) (string, error) {
		return "", errors.New(long)
	})
	require.NoError(t, err)
	small, err := tools.New("small", "Returns 10 é, limited to 8 bytes.", func(context.Context, struct{}) (string, error) {
		return long, nil
	}, func(o *tools.Options) { o.MaxOutput = 8 })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(say, fail, small)
	require.NoError(t, err)
	tests := []struct {
		name      string
		limit     int
		json      bool
		tool      string
		want      string
		truncated bool
	}{
		{"under the default", 0, false, "say", `"` + long + `"`, false},
		{"at the limit", 22, false, "say", `"` + long + `"`, false},
		{"past the executor's limit, cut on a rune", 10, false, "say", `"éééé… [truncated: 22 bytes, first 9 kept]`, true},
		{"JSON mode sends cut output as text", 10, true, "say", `"éééé… [truncated: 22 bytes, first 9 kept]`, true},
		{"the tool's own limit wins", 100, false, "small", `"ééé… [truncated: 22 bytes, first 7 kept]`, true},
		{"error texts too", 11, false, "fail", `Error: éé… [truncated: 27 bytes, first 11 kept]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ends []converse.ToolEnd
			e := &converse.Executor{Registry: reg, ToolOptions: converse.ToolOptions{MaxOutput: tt.limit, JSONContent: tt.json}, OnEvent: func(ev converse.Event) {
				if end, ok := ev.(converse.ToolEnd); ok {
					ends = append(ends, end)
				}
			}}
			got := results(t, e.Execute(context.Background(), []types.ContentBlock{toolUse("1", tt.tool, map[string]any{})}))
			require.Len(t, got, 1)
			assert.Equal(t, tt.want, got[0].Text)
			require.Len(t, ends, 1)
			assert.Equal(t, tt.truncated, ends[0].Truncated)
		})
	}
}
