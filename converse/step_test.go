package converse_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/tools"
)

// stepScenario is a conversation that takes every kind of step. It has two
// parallel calls, and a call that needs approval beside one that does not. Its
// history outgrows the context policy (trimmed, with a summary call). It has
// prompt caching on a long system prompt.
func stepScenario(t *testing.T) (bedrocktest.Handler, *tools.Registry, func(*converse.Options)) {
	t.Helper()
	replies := []*bedrocktest.Reply{
		bedrocktest.ToolUse("Two pages at once.",
			bedrocktest.Call{ID: "tooluse_1", Name: "fetch", Input: map[string]any{"page": 1}},
			bedrocktest.Call{ID: "tooluse_2", Name: "fetch", Input: map[string]any{"page": 2}}),
		bedrocktest.ToolUse("",
			bedrocktest.Call{ID: "tooluse_3", Name: "send", Input: map[string]any{"to": "ops"}},
			bedrocktest.Call{ID: "tooluse_4", Name: "fetch", Input: map[string]any{"page": 3}}),
	}
	for i := 4; i <= 9; i++ {
		replies = append(replies, bedrocktest.ToolUse("", bedrocktest.Call{ID: fmt.Sprint("tooluse_", i+1), Name: "fetch", Input: map[string]any{"page": i}}))
	}
	script := bedrocktest.Script(append(replies, bedrocktest.Text("Done: sent, and read them all."))...)
	h := bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		for _, b := range req.Messages[len(req.Messages)-1].Content {
			if tb, ok := b.(*types.ContentBlockMemberText); ok && strings.HasPrefix(tb.Value, "Summarize the conversation so far") {
				return bedrocktest.Text("Pages were fetched and a message was sent."), nil
			}
		}
		return script.ServeConverse(ctx, req)
	})
	type to struct {
		To string `json:"to"`
	}
	send, err := tools.New("send", "Sends a message.", func(ctx context.Context, in to) (string, error) { return "sent to " + in.To, nil },
		func(o *tools.Options) { o.RequireApproval = true })
	require.NoError(t, err)
	reg := fetchTool(t, 250)
	require.NoError(t, reg.Add(send))
	opts := func(o *converse.Options) {
		o.Request.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: strings.Repeat("You read archives carefully. ", 300)}}
		o.Cache = &converse.CachePolicy{}
		o.MaxTurns = 20
		o.Context = &converse.ContextPolicy{MaxInputTokens: 6000, Summarize: true}
	}
	return h, reg, opts
}

// modelCall makes a Request's model call for an engine.
type modelCall func(ctx context.Context, req *converse.ModelCall) (*bedrockruntime.ConverseOutput, error)

// converseWith makes a Request's call with Converse on client.
func converseWith(client *bedrockruntime.Client) modelCall {
	return func(ctx context.Context, req *converse.ModelCall) (*bedrockruntime.ConverseOutput, error) {
		return client.Converse(ctx, req.Input)
	}
}

// engineCalls are the ways an engine makes a Request's call: with Converse
// on a client of its own; with ConverseStream on its own client, the
// events assembled by AssembleStream; with the conversation's
// ConverseStream. Each streams when the Request says Send would.
func engineCalls(client *bedrockruntime.Client, c *converse.Conversation) map[string]modelCall {
	converseCall := converseWith(client)
	return map[string]modelCall{
		"Converse": converseCall,
		"AssembleStream": func(ctx context.Context, req *converse.ModelCall) (*bedrockruntime.ConverseOutput, error) {
			if !req.Stream() {
				return converseCall(ctx, req)
			}
			so, err := client.ConverseStream(ctx, req.StreamInput())
			if err != nil {
				return nil, err
			}
			return converse.AssembleStream(ctx, so)
		},
		"Conversation.ConverseStream": func(ctx context.Context, req *converse.ModelCall) (*bedrockruntime.ConverseOutput, error) {
			if !req.Stream() {
				return c.Converse(ctx, req.Input)
			}
			return c.ConverseStream(ctx, req.StreamInput())
		},
	}
}

// engine is what a hand-written step loop performs a step's effects with.
type engine struct {
	call   modelCall
	count  counter              // nil: a count fails, and the step estimates
	report func(converse.Event) // nil: the steps' events are dropped
}

// driveSteps is the hand-driven loop of an engine: each model call made by
// e.call, each token count by e.count, each tool call run on its own, each
// pending call approved, each step's events handed to e.report.
func driveSteps(ctx context.Context, c *converse.Conversation, e engine, prompt string) (*converse.Result, error) {
	step, err := c.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: prompt}}})
	return driveFrom(ctx, c, e, step, err)
}

// driveFrom is driveSteps from a step that Begin or BeginStructured
// returned, with its error.
func driveFrom(ctx context.Context, c *converse.Conversation, e engine, step *converse.Step, err error) (*converse.Result, error) {
	for {
		if step != nil && e.report != nil {
			for _, ev := range step.Events {
				e.report(ev)
			}
		}
		if err != nil {
			return nil, err
		}
		if step.Result != nil {
			return step.Result, nil
		}
		step, err = e.perform(ctx, c, step)
	}
}

// perform makes the effects of step and hands their outcome to c.
func (e engine) perform(ctx context.Context, c *converse.Conversation, step *converse.Step) (*converse.Step, error) {
	switch {
	case step.ModelCall != nil:
		out, callErr := e.call(ctx, step.ModelCall)
		return c.HandleResponse(ctx, step.ModelCall, out, callErr)
	case step.CountTokens != nil:
		var out *bedrockruntime.CountTokensOutput
		countErr := errors.New("this engine counts no tokens")
		if e.count != nil {
			out, countErr = e.count(ctx, step.CountTokens)
		}
		return c.HandleCount(ctx, step.CountTokens, out, countErr)
	case len(step.Calls) > 0:
		var results []converse.CallResult
		for _, call := range step.Calls {
			results = append(results, c.Executor().Run(ctx, call))
		}
		return c.AnswerCalls(ctx, results...)
	}
	var ds []converse.Decision
	for _, p := range step.Pending {
		ds = append(ds, p.Approve())
	}
	return c.Decide(ctx, ds...)
}

// TestStepsSendWhatSendSends: the same conversation driven by Send and by hand
// through the step API makes byte-identical requests, summary call, trimmed
// history and cache points included. It does so with Converse and with
// ConverseStream (the events assembled by AssembleStream, or by the
// conversation's ConverseStream).
func TestStepsSendWhatSendSends(t *testing.T) {
	for _, stream := range []bool{false, true} {
		ways := []string{"Converse"}
		if stream {
			ways = []string{"AssembleStream", "Conversation.ConverseStream"}
		}
		for _, way := range ways {
			t.Run(way, func(t *testing.T) { testStepsSendWhatSendSends(t, stream, way) })
		}
	}
}

func testStepsSendWhatSendSends(t *testing.T, stream bool, way string) {
	ctx := context.Background()
	streams := func(o *converse.Options) { o.Stream = streamIf(stream) }
	h, reg, opts := stepScenario(t)
	sendSrv, sendClient := serve(t, h, func(o *bedrocktest.Options) { o.Accounting = true })
	var trims int
	byHand := converse.New(sendClient, claude, reg, opts, streams, func(o *converse.Options) {
		o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
			return call.Approve(), nil
		}
		o.OnEvent = func(ev converse.Event) {
			if _, ok := ev.(converse.Trimmed); ok {
				trims++
			}
		}
	})
	want, err := byHand.Send(ctx, "Read the archive and tell ops.")
	require.NoError(t, err)
	require.Positive(t, trims, "the scenario trims")

	h, reg, opts = stepScenario(t)
	stepSrv, stepClient := serve(t, h, func(o *bedrocktest.Options) { o.Accounting = true })
	var c *converse.Conversation
	if way == "Conversation.ConverseStream" {
		c = converse.New(stepClient, claude, reg, opts, streams)
	} else {
		c = converse.New(nil, claude, reg, opts, streams)
	}
	got, err := driveSteps(ctx, c, engine{call: engineCalls(stepClient, c)[way]}, "Read the archive and tell ops.")
	require.NoError(t, err)

	assert.Equal(t, want.Text, got.Text)
	assert.Equal(t, want.Turns, got.Turns)
	assert.Equal(t, want.Usage, got.Usage)
	sent, driven := sendSrv.Requests(), stepSrv.Requests()
	require.Len(t, driven, len(sent))
	var points, summaries, streamed int
	for i := range sent {
		assert.Equal(t, sent[i].Operation, driven[i].Operation, "request %d", i+1)
		assert.JSONEq(t, string(sent[i].Body), string(driven[i].Body), "request %d", i+1)
		points += strings.Count(string(sent[i].Body), `"cachePoint"`)
		if strings.Contains(string(sent[i].Body), "Summarize the conversation so far") {
			summaries++
		}
		if sent[i].Operation == recording.OpConverseStream {
			streamed++
		}
	}
	assert.Positive(t, points, "the requests carry cache points")
	assert.Positive(t, summaries, "a summary call was made")
	if stream {
		assert.Equal(t, len(sent)-summaries, streamed, "every turn streamed, the summary did not")
	}
	assert.Equal(t, byHand.History(), c.History())
	wantState, err := json.Marshal(byHand.State())
	require.NoError(t, err)
	gotState, err := json.Marshal(c.State())
	require.NoError(t, err)
	assert.JSONEq(t, string(wantState), string(gotState), "the same state, whichever drives")
	assertValid(t, c, claude)
}

// TestConverseWithoutClient: a conversation built for the step API alone
// (no client) refuses a model call with an error, not a panic.
func TestConverseWithoutClient(t *testing.T) {
	c := converse.New(nil, claude, nil)
	out, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{})
	assert.Nil(t, out)
	assert.ErrorContains(t, err, "converse: the conversation has no client")
}

// TestStepsTakeOnlyTheAnswerAwaited: an engine that delivers at least once
// hands a response twice, or a stale one, or a result again: each is
// ErrStaleStep and changes nothing. Results in batches, and a decision
// while calls run, list each call in the Calls of one step only.
// TestStepsTakeOnlyTheAnswerAwaited: every answer delivered twice (a
// response, a result, a whole round, a decision) is ErrStaleStep and
// changes nothing, as an engine that delivers at least once needs.
func TestStepsTakeOnlyTheAnswerAwaited(t *testing.T) {
	ctx := context.Background()
	first := bedrocktest.ToolUse("Two pages.",
		bedrocktest.Call{ID: "tooluse_1", Name: "fetch", Input: map[string]any{"page": 1}},
		bedrocktest.Call{ID: "tooluse_2", Name: "fetch", Input: map[string]any{"page": 2}})
	second := bedrocktest.ToolUse("",
		bedrocktest.Call{ID: "tooluse_3", Name: "fetch", Input: map[string]any{"page": 3}},
		bedrocktest.Call{ID: "tooluse_4", Name: "send", Input: map[string]any{"to": "ops"}})
	srv, client := serve(t, bedrocktest.Script(first, second, bedrocktest.Text("Done.")))
	_, reg, _ := stepScenario(t)
	c := converse.New(nil, claude, reg)

	listed := map[string]int{}
	list := func(step *converse.Step) []string {
		var ids []string
		for _, call := range step.Calls {
			listed[call.ID]++
			ids = append(ids, call.ID)
		}
		return ids
	}
	run := func(call converse.Call) converse.CallResult { return c.Executor().Run(ctx, call) }
	byID := func(step *converse.Step) map[string]converse.Call {
		m := map[string]converse.Call{}
		for _, call := range step.Calls {
			m[call.ID] = call
		}
		return m
	}

	step, err := c.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Read two pages, then tell ops."}}})
	require.NoError(t, err)
	turn1 := step.ModelCall
	out1, err := client.Converse(ctx, turn1.Input)
	require.NoError(t, err)
	step, err = c.HandleResponse(ctx, turn1, out1, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"tooluse_1", "tooluse_2"}, list(step))
	calls := byID(step)

	before := c.History()
	_, err = c.HandleResponse(ctx, turn1, out1, nil)
	require.ErrorIs(t, err, converse.ErrStaleStep, "the same response again")
	assert.Equal(t, before, c.History(), "a duplicate changes nothing")

	// One result, then the other: the second batch's step lists nothing
	// again while tooluse_2 is out.
	r1 := run(calls["tooluse_1"])
	step, err = c.AnswerCalls(ctx, r1)
	require.NoError(t, err)
	assert.Empty(t, list(step), "tooluse_2 was handed out already")
	assert.Nil(t, step.ModelCall)
	assert.Nil(t, step.Result)
	assert.Empty(t, step.Pending)
	require.Len(t, step.Waiting, 1, "the step waits for tooluse_2")
	assert.Equal(t, "tooluse_2", step.Waiting[0].ID)
	_, err = c.AnswerCalls(ctx, r1)
	require.ErrorIs(t, err, converse.ErrStaleStep, "a result given twice")
	for name, bad := range map[string]types.ContentBlock{
		"no content": &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("tooluse_2")}},
		"blank text": &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String("tooluse_2"),
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: " "}}}},
		"not a result": &types.ContentBlockMemberText{Value: "done"},
	} {
		_, err = c.AnswerCalls(ctx, converse.CallResult{ID: "tooluse_2", Result: bad})
		require.Error(t, err, name)
		assert.Equal(t, before, c.History(), "%s is refused: tooluse_2 still awaits its result", name)
	}
	r2 := run(calls["tooluse_2"])
	step, err = c.AnswerCalls(ctx, r2)
	require.NoError(t, err)
	require.NotNil(t, step.ModelCall)
	before = c.History()
	_, err = c.AnswerCalls(ctx, r1, r2)
	require.ErrorIs(t, err, converse.ErrStaleStep, "the whole round again")
	assert.Equal(t, before, c.History(), "a round given twice changes nothing")

	turn2 := step.ModelCall
	_, err = c.HandleResponse(ctx, turn1, out1, nil)
	require.ErrorIs(t, err, converse.ErrStaleStep, "turn 1's response while turn 2 is awaited")
	out2, err := client.Converse(ctx, turn2.Input)
	require.NoError(t, err)
	step, err = c.HandleResponse(ctx, turn2, out2, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"tooluse_3"}, list(step))
	require.Len(t, step.Pending, 1)
	calls = byID(step)

	// The decision comes while tooluse_3 runs: only the approved call is new.
	step, err = c.Decide(ctx, converse.Call{ID: "tooluse_4"}.Approve())
	require.NoError(t, err)
	assert.Equal(t, []string{"tooluse_4"}, list(step))
	_, err = c.Decide(ctx, converse.Call{ID: "tooluse_4"}.Approve())
	require.ErrorIs(t, err, converse.ErrStaleStep, "a decision given twice")
	for id, call := range byID(step) {
		calls[id] = call
	}
	step, err = c.AnswerCalls(ctx, run(calls["tooluse_4"]), run(calls["tooluse_3"]))
	require.NoError(t, err)
	require.NotNil(t, step.ModelCall)
	out3, err := client.Converse(ctx, step.ModelCall.Input)
	require.NoError(t, err)
	step, err = c.HandleResponse(ctx, step.ModelCall, out3, nil)
	require.NoError(t, err)
	require.NotNil(t, step.Result)
	assert.Equal(t, "Done.", step.Result.Text)
	_, err = c.HandleResponse(ctx, turn2, out2, nil)
	require.ErrorIs(t, err, converse.ErrStaleStep, "a response after the end")

	for id, n := range listed {
		assert.Equal(t, 1, n, "%s listed in %d steps", id, n)
	}
	assert.Len(t, listed, 4)
	assert.Len(t, srv.Requests(), 3)
	assertValid(t, c, claude)
}

// TestWithoutAConversation: NewExecutor runs a call as the Executor of a
// Conversation with the same model and options (the status field by the
// model's family, an execute_tool span). CallModel makes a model call as
// Conversation.Converse does, in a chat span of the request's model.
func TestWithoutAConversation(t *testing.T) {
	ctx := context.Background()
	_, reg, _ := stepScenario(t)
	calls := []converse.Call{
		{ID: "t1", Tool: "fetch", Input: json.RawMessage(`{"page":1}`)},
		{ID: "t2", Tool: "fetch", Input: json.RawMessage(`{"page":"one"}`)},
	}
	for _, model := range []string{claude, llama} {
		tr := newTraced(t)
		want := converse.New(nil, model, reg, tr.options).Executor()
		got := converse.NewExecutor(model, reg, tr.options)
		for _, call := range calls {
			assert.Equal(t, want.Run(ctx, call), got.Run(ctx, call), "%s, call %s", model, call.ID)
		}
		failed := got.Run(ctx, calls[1]).Result.(*types.ContentBlockMemberToolResult).Value.Status
		assert.Equal(t, map[string]types.ToolResultStatus{claude: "error", llama: ""}[model], failed, model)
		assert.Len(t, tr.named("execute_tool fetch"), 2*len(calls)+1, model)
	}

	_, client := serve(t, bedrocktest.Script(bedrocktest.Text("Hello.")))
	tr := newTraced(t)
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(llama), Messages: []types.Message{
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi."}}},
	}}
	out, err := converse.CallModel(ctx, client, in, tr.options)
	require.NoError(t, err)
	assert.Equal(t, types.StopReasonEndTurn, out.StopReason)
	assert.Equal(t, llama, attrs(tr.one(t, "chat "+llama))["gen_ai.request.model"].AsString())
}
