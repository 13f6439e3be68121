package converse_test

// The naive baseline of the benchmarks (impl=naive): the pattern teams write
// by hand against the raw SDK, and the test that it does the library's work.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydocument "github.com/aws/smithy-go/document"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/wirejson"
	"github.com/tooluse/bedrock/tools"
)

// naiveTool adapts a typed function to the naive executor's table.
func naiveTool[In, Out any](fn func(context.Context, In) (Out, error)) func(context.Context, []byte) (any, error) {
	return func(ctx context.Context, raw []byte) (any, error) {
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, err
		}
		return fn(ctx, in)
	}
}

var naiveTools = map[string]func(context.Context, []byte) (any, error){
	"add":   naiveTool(benchAdd),
	"sleep": naiveTool(benchSleep),
	"wait":  naiveTool(benchWait),
}

// naiveExecute is the hand-written executor: for each toolUse block, in
// order, read the input document, decode it into the arguments, call the
// function, encode its output and wrap it in a toolResult.
func naiveExecute(ctx context.Context, content []types.ContentBlock) []types.ContentBlock {
	return validatedExecute(ctx, nil, content)
}

// validatedExecute is naiveExecute with each call's input first checked
// against its tool's JSON Schema with jsonschema-go, as the library does
// (impl=validated); a nil schemas checks nothing. The calls still run one
// by one on the caller's goroutine, so a hung tool hangs the turn.
func validatedExecute(ctx context.Context, schemas map[string]*jsonschema.Resolved, content []types.ContentBlock) []types.ContentBlock {
	var results []types.ContentBlock
	for _, block := range content {
		tu, ok := block.(*types.ContentBlockMemberToolUse)
		if !ok {
			continue
		}
		out, err := naiveRun(ctx, tu.Value, schemas[aws.ToString(tu.Value.Name)])
		results = append(results, naiveResult(tu.Value, out, err))
	}
	return results
}

// guardedExecute is naiveExecute written with the guarantees a careful
// hand-written loop adds (impl=guarded). Each call's input is checked against
// its tool's JSON Schema with jsonschema-go. The calls run at once, each on a
// goroutine of its own under a timeout. So a hung tool is answered as timed
// out and the others still are.
func guardedExecute(ctx context.Context, schemas map[string]*jsonschema.Resolved, content []types.ContentBlock) []types.ContentBlock {
	type call struct {
		use    types.ToolUseBlock
		ctx    context.Context
		cancel context.CancelFunc
		done   chan []byte
		err    error
	}
	var calls []*call
	for _, block := range content {
		tu, ok := block.(*types.ContentBlockMemberToolUse)
		if !ok {
			continue
		}
		c := &call{use: tu.Value, done: make(chan []byte, 1)}
		c.ctx, c.cancel = context.WithTimeout(ctx, time.Minute)
		go func() {
			out, err := naiveRun(c.ctx, c.use, schemas[aws.ToString(c.use.Name)])
			c.err = err
			c.done <- out
		}()
		calls = append(calls, c)
	}
	results := make([]types.ContentBlock, len(calls))
	for i, c := range calls {
		select {
		case out := <-c.done:
			results[i] = naiveResult(c.use, out, c.err)
		case <-c.ctx.Done():
			results[i] = naiveResult(c.use, nil, fmt.Errorf("tool %q timed out: %w", aws.ToString(c.use.Name), c.ctx.Err()))
		}
		c.cancel()
	}
	return results
}

// naiveResult is the toolResult block of a call's output or error.
func naiveResult(tu types.ToolUseBlock, out []byte, err error) types.ContentBlock {
	status, text := types.ToolResultStatusSuccess, string(out)
	if err != nil {
		status, text = types.ToolResultStatusError, "Error: "+err.Error()
	}
	return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: tu.ToolUseId,
		Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: text}},
		Status:    status,
	}}
}

// naiveRun runs one call, its input first checked against schema if that
// is set.
func naiveRun(ctx context.Context, tu types.ToolUseBlock, schema *jsonschema.Resolved) ([]byte, error) {
	raw, err := tu.Input.MarshalSmithyDocument()
	if err != nil {
		return nil, err
	}
	fn, ok := naiveTools[aws.ToString(tu.Name)]
	if !ok {
		return nil, fmt.Errorf("unknown tool %q", aws.ToString(tu.Name))
	}
	if schema != nil {
		var input any
		if err := json.Unmarshal(raw, &input); err != nil {
			return nil, err
		}
		if err := schema.Validate(input); err != nil {
			return nil, err
		}
	}
	v, err := fn(ctx, raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// naiveChat is the hand-written loop on the raw SDK: call Converse, append
// the assistant message, run the tools with naiveExecute, append their
// results, and call again until the model stops asking. Its tool
// configuration is built once, as a hand-written program would
// (newNaiveSetup).
type naiveChat struct {
	client converse.Client
	*naiveSetup
	impl    string // naive, validated or guarded: how execute runs the tools
	history []types.Message
}

// newNaiveChat is the loop of impl, naive, validated or guarded.
func newNaiveChat(b testing.TB, impl string, client converse.Client, reg *tools.Registry) *naiveChat {
	c, err := naiveChatFor(impl, client, reg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// naiveSetup is what a hand-written program prepares once for its tools.
type naiveSetup struct {
	config  *types.ToolConfiguration
	schemas map[string]*jsonschema.Resolved // by tool name, for validatedExecute and guardedExecute
}

// naiveSetups are the setups of the naive chats, one a registry, made by
// the first chat of the process that offers it.
var naiveSetups sync.Map // *tools.Registry -> *naiveSetup

// naiveChatFor is newNaiveChat, or why it could not start.
func naiveChatFor(impl string, client converse.Client, reg *tools.Registry) (*naiveChat, error) {
	setup, ok := naiveSetups.Load(reg)
	if !ok {
		s, err := newNaiveSetup(reg)
		if err != nil {
			return nil, err
		}
		setup, _ = naiveSetups.LoadOrStore(reg, s)
	}
	return &naiveChat{client: client, naiveSetup: setup.(*naiveSetup), impl: impl}, nil
}

// newNaiveSetup describes the registry's tools as SDK programs do: each
// tool's name, description and input schema, the schema as a lazy document
// of its decoded JSON; and it resolves each schema with jsonschema-go.
func newNaiveSetup(reg *tools.Registry) (*naiveSetup, error) {
	s := &naiveSetup{config: &types.ToolConfiguration{}, schemas: map[string]*jsonschema.Resolved{}}
	for _, t := range reg.Tools() {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema(), &schema); err != nil {
			return nil, err
		}
		s.config.Tools = append(s.config.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{
			Name:        aws.String(t.Name()),
			Description: aws.String(t.Description()),
			InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
		}})
		var js jsonschema.Schema
		if err := json.Unmarshal(t.InputSchema(), &js); err != nil {
			return nil, err
		}
		rs, err := js.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name(), err)
		}
		s.schemas[t.Name()] = rs
	}
	return s, nil
}

// execute runs a turn's tools as the chat's impl does.
func (c *naiveChat) execute(ctx context.Context, content []types.ContentBlock) []types.ContentBlock {
	switch c.impl {
	case "guarded":
		return guardedExecute(ctx, c.schemas, content)
	case "validated":
		return validatedExecute(ctx, c.schemas, content)
	}
	return naiveExecute(ctx, content)
}

func (c *naiveChat) Send(ctx context.Context, text string) error {
	c.history = append(c.history, benchUserText(text))
	for {
		out, err := c.client.Converse(ctx, &bedrockruntime.ConverseInput{
			ModelId:    aws.String(benchModelID),
			Messages:   c.history,
			ToolConfig: c.config,
		})
		if err != nil {
			return err
		}
		msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
		if !ok {
			return errors.New("no message")
		}
		c.history = append(c.history, naiveEcho(msg.Value))
		if out.StopReason != types.StopReasonToolUse {
			return nil
		}
		c.history = append(c.history, types.Message{Role: types.ConversationRoleUser, Content: c.execute(ctx, msg.Value.Content)})
	}
}

// naiveStreamChat is naiveChat on ConverseStream: it assembles each turn's
// message from the events (text deltas joined, a toolUse block's input
// deltas joined and decoded into a document) before running the tools.
// impl=guarded reads a stream with the guarantees the library's has: it
// stops reading when ctx ends, a stream without messageStop is an error,
// and the numbers of a tool's input are kept digit for digit.
type naiveStreamChat struct{ *naiveChat }

func (c *naiveStreamChat) Send(ctx context.Context, text string) error {
	c.history = append(c.history, benchUserText(text))
	for {
		msg, stop, err := c.turn(ctx)
		if err != nil {
			return err
		}
		c.history = append(c.history, msg)
		if stop != types.StopReasonToolUse {
			return nil
		}
		c.history = append(c.history, types.Message{Role: types.ConversationRoleUser, Content: c.execute(ctx, msg.Content)})
	}
}

func (c *naiveStreamChat) turn(ctx context.Context) (types.Message, types.StopReason, error) {
	msg := types.Message{Role: types.ConversationRoleAssistant}
	out, err := c.client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{
		ModelId:    aws.String(benchModelID),
		Messages:   c.history,
		ToolConfig: c.config,
	})
	if err != nil {
		return msg, "", err
	}
	stream := out.GetStream()
	defer stream.Close()
	guarded := c.impl == "guarded"
	var stop types.StopReason
	var tu *types.ToolUseBlock
	var buf strings.Builder
	for {
		ev, ok := naiveNext(ctx, stream.Events(), guarded)
		if !ok {
			break
		}
		switch ev := ev.(type) {
		case *types.ConverseStreamOutputMemberContentBlockStart:
			if start, ok := ev.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
				tu = &types.ToolUseBlock{ToolUseId: start.Value.ToolUseId, Name: start.Value.Name}
			}
		case *types.ConverseStreamOutputMemberContentBlockDelta:
			switch d := ev.Value.Delta.(type) {
			case *types.ContentBlockDeltaMemberText:
				buf.WriteString(d.Value)
			case *types.ContentBlockDeltaMemberToolUse:
				buf.WriteString(aws.ToString(d.Value.Input))
			}
		case *types.ConverseStreamOutputMemberContentBlockStop:
			if tu == nil {
				msg.Content = append(msg.Content, &types.ContentBlockMemberText{Value: buf.String()})
			} else {
				input, err := naiveInput(buf.String(), guarded)
				if err != nil {
					return msg, "", err
				}
				tu.Input = input
				msg.Content = append(msg.Content, &types.ContentBlockMemberToolUse{Value: *tu})
				tu = nil
			}
			buf.Reset()
		case *types.ConverseStreamOutputMemberMessageStop:
			stop = ev.Value.StopReason
		}
	}
	if err := ctx.Err(); err != nil {
		return msg, "", err
	}
	if err := stream.Err(); err != nil {
		return msg, "", err
	}
	if guarded && stop == "" {
		return msg, "", errNaiveTruncated
	}
	return msg, stop, nil
}

// errNaiveTruncated is the guarded stream's error for a stream that ended
// before messageStop.
var errNaiveTruncated = errors.New("stream ended before messageStop")

// naiveNext is the next event of a stream; guarded, it stops waiting when
// ctx ends.
func naiveNext(ctx context.Context, events <-chan types.ConverseStreamOutput, guarded bool) (types.ConverseStreamOutput, bool) {
	if !guarded {
		ev, ok := <-events
		return ev, ok
	}
	select {
	case ev, ok := <-events:
		return ev, ok
	case <-ctx.Done():
		return nil, false
	}
}

// naiveInput decodes a streamed tool input into a document. Guarded, its
// numbers stay exact (json.Number, as the SDK's Converse decoder keeps them).
func naiveInput(text string, guarded bool) (document.Interface, error) {
	var input any
	if !guarded {
		err := json.Unmarshal([]byte(text), &input)
		return document.NewLazyDocument(input), err
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&input); err != nil {
		return nil, err
	}
	return document.NewLazyDocument(naiveExact(input)), nil
}

// naiveExact turns the json.Numbers of a decoded value into smithy document
// numbers, which the SDK encodes digit for digit.
func naiveExact(v any) any {
	switch v := v.(type) {
	case json.Number:
		return smithydocument.Number(v)
	case map[string]any:
		for k, e := range v {
			v[k] = naiveExact(e)
		}
	case []any:
		for i, e := range v {
			v[i] = naiveExact(e)
		}
	}
	return v
}

// naiveEcho drops the "type" of toolUse blocks, which Bedrock returns and
// rejects when sent back: no loop that works can skip this step.
func naiveEcho(msg types.Message) types.Message {
	content := make([]types.ContentBlock, len(msg.Content))
	for i, block := range msg.Content {
		if tu, ok := block.(*types.ContentBlockMemberToolUse); ok {
			v := tu.Value
			v.Type = ""
			block = &types.ContentBlockMemberToolUse{Value: v}
		}
		content[i] = block
	}
	return types.Message{Role: msg.Role, Content: content}
}

// TestBenchBaselinesAgree checks that the naive baselines do the work the
// library does: the same tool results, and the same history on the wire.
func TestBenchBaselinesAgree(t *testing.T) {
	reg := benchRegistry(t)
	ctx := context.Background()
	content := benchToolTurn(t, "add", 8)
	ours, err := wirejson.MarshalMessages([]types.Message{{Role: types.ConversationRoleUser, Content: (&converse.Executor{Registry: reg}).Execute(ctx, content)}})
	require.NoError(t, err)
	for _, impl := range []string{"naive", "validated", "guarded"} {
		results := newNaiveChat(t, impl, nil, reg).execute(ctx, content)
		naive, err := wirejson.MarshalMessages([]types.Message{{Role: types.ConversationRoleUser, Content: results}})
		require.NoError(t, err)
		assert.Equal(t, string(naive), string(ours), "tool results differ (%s, converse)", impl)
	}

	srv := bedrocktest.NewServer(benchModel(2))
	defer srv.Close()
	chat := newNaiveChat(t, "naive", srv.Client(), reg)
	require.NoError(t, chat.Send(ctx, "Add things."))
	res, err := converse.New(srv.Client(), benchModelID, reg).Send(ctx, "Add things.")
	require.NoError(t, err)
	naive, err := wirejson.MarshalMessages(chat.history)
	require.NoError(t, err)
	ours, err = wirejson.MarshalMessages(res.History)
	require.NoError(t, err)
	assert.Equal(t, string(naive), string(ours), "histories differ (naive, converse)")
	assert.Equal(t, 3, res.Turns, "turns")
	assert.Len(t, res.History, 6, "messages")
	reqs := srv.Requests()
	require.Len(t, reqs, 6)
	for i := range 3 { // the naive loop's requests, then the library's
		assert.Equal(t, string(reqs[i].Body), string(reqs[i+3].Body), "request %d differs (naive, converse)", i+1)
	}

	streamed := newBenchChatStreamed(t, "naive", true, srv.Client(), reg).(*naiveStreamChat)
	require.NoError(t, streamed.Send(ctx, "Add things."))
	res, err = converse.New(srv.Client(), benchModelID, reg, func(o *converse.Options) { o.Stream = &converse.StreamPolicy{} }).Send(ctx, "Add things.")
	require.NoError(t, err)
	naive, err = wirejson.MarshalMessages(streamed.history)
	require.NoError(t, err)
	streamedOurs, err := wirejson.MarshalMessages(res.History)
	require.NoError(t, err)
	assert.Equal(t, string(naive), string(streamedOurs), "streamed histories differ (naive, converse)")
	assert.Equal(t, string(ours), string(streamedOurs), "histories differ (unstreamed, streamed)")
}

// TestGuardedExecuteGuards checks that the validated and guarded baselines
// give the guarantees they are measured for. Input that fails its schema is
// answered as an error by both. A call that outlives its timeout is answered
// so by the guarded one.
func TestGuardedExecuteGuards(t *testing.T) {
	reg := benchRegistry(t)
	for name, tc := range map[string]struct {
		impl, tool string
		input      map[string]any
		want       string
	}{
		"validated: input against the schema": {"validated", "add", map[string]any{"a": 7}, "required"}, // decodes, but b is required
		"guarded: input against the schema":   {"guarded", "add", map[string]any{"a": 7}, "required"},
		"guarded: a call past its timeout":    {"guarded", "wait", map[string]any{"a": 2 * 60 * 1000, "b": 7}, "timed out"},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				content := []types.ContentBlock{&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String("tooluse_1"), Name: aws.String(tc.tool), Input: document.NewLazyDocument(tc.input),
				}}}
				results := newNaiveChat(t, tc.impl, nil, reg).execute(context.Background(), content)
				require.Len(t, results, 1)
				r := results[0].(*types.ContentBlockMemberToolResult).Value
				assert.Equal(t, types.ToolResultStatusError, r.Status)
				assert.Contains(t, r.Content[0].(*types.ToolResultContentBlockMemberText).Value, tc.want)
				time.Sleep(2 * time.Minute) // the call left behind returns before the bubble ends
			})
		})
	}
}

// TestGuardedStreamGuards checks that the guarded stream reads as the
// library does: a stream without messageStop is an error, and a tool's
// input keeps its numbers digit for digit in the history.
func TestGuardedStreamGuards(t *testing.T) {
	truncated := bedrocktest.ToolUse("Adding.", bedrocktest.Call{ID: "t1", Name: "add", Input: map[string]any{"a": 1, "b": 2}})
	truncated.DropMessageStop = true
	exact := &bedrocktest.Reply{Events: streamEvents(t, types.StopReasonToolUse, `{"a": 9007199254740993, "b": 0.1}`)}
	_, client := serve(t, bedrocktest.Script(truncated, exact))
	chat := &naiveStreamChat{newNaiveChat(t, "guarded", client, benchRegistry(t))}
	chat.history = []types.Message{benchUserText("Add things.")}

	_, _, err := chat.turn(context.Background())
	require.ErrorIs(t, err, errNaiveTruncated)

	msg, stop, err := chat.turn(context.Background())
	require.NoError(t, err)
	assert.Equal(t, types.StopReasonToolUse, stop)
	input, err := msg.Content[0].(*types.ContentBlockMemberToolUse).Value.Input.MarshalSmithyDocument()
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":9007199254740993,"b":0.1}`, string(input))
	assert.Contains(t, string(input), "9007199254740993")
}
