package converse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/internal/testimage"
	"github.com/tooluse/bedrock/converse/wirejson"
	"github.com/tooluse/bedrock/tools"
)

const claude = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

// serve starts an offline Bedrock and returns it with a real SDK client.
func serve(t *testing.T, h bedrocktest.Handler, optFns ...func(*bedrocktest.Options)) (*bedrocktest.Server, *bedrockruntime.Client) {
	t.Helper()
	srv := bedrocktest.NewServer(h, optFns...)
	t.Cleanup(srv.Close)
	return srv, srv.Client()
}

func calculator(t *testing.T) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(tools.Calculator())
	require.NoError(t, err)
	return reg
}

// assertValid sends the conversation's history once more to a strict
// bedrocktest server: it fails the way Bedrock would if the history were
// not a valid conversation.
func assertValid(t *testing.T, c *converse.Conversation, model string) {
	t.Helper()
	h := c.History()
	if len(h) == 0 {
		return
	}
	if h[len(h)-1].Role == types.ConversationRoleAssistant { // an interrupted history is sent as it is
		h = append(h, types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{text("and now?")}})
	}
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("ok")))
	reg := calculator(t)
	cfg, err := (&converse.Executor{Registry: reg}).ToolConfig(nil)
	require.NoError(t, err)
	_, err = client.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: h, ToolConfig: cfg})
	require.NoError(t, err, "history is not a valid Bedrock conversation")
	require.Len(t, srv.Requests(), 1)
}

func TestRunWithoutTools(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("Hello!")))
	res, err := converse.New(client, claude, nil).Send(context.Background(), "Hi")
	require.NoError(t, err)
	assert.Equal(t, "Hello!", res.Text)
	assert.Equal(t, types.StopReasonEndTurn, res.StopReason)
	assert.Equal(t, 1, res.Turns)
	assert.Equal(t, converse.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}, res.Usage)
	assert.Len(t, res.History, 2)
	req := srv.Requests()[0]
	assert.Nil(t, req.ToolConfig, "no tools, no toolConfig")
	assert.Equal(t, claude, aws.ToString(req.ModelId))
}

func TestTwoCalculatorsAnsweredByID(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("I'll add both.",
			bedrocktest.Call{ID: "AB3", Name: "calculator", Input: map[string]any{"a": 10, "b": 10}},
			bedrocktest.Call{ID: "PO9", Name: "calculator", Input: map[string]any{"a": 30, "b": 30}}),
		bedrocktest.Text("10+10 is 20 and 30+30 is 60."),
	))
	c := converse.New(client, claude, calculator(t))
	res, err := c.Send(context.Background(), "What are 10+10 and 30+30?")
	require.NoError(t, err)
	assert.Equal(t, "10+10 is 20 and 30+30 is 60.", res.Text)
	assert.Equal(t, 2, res.Turns)
	assert.Equal(t, converse.Usage{InputTokens: 20, OutputTokens: 10, TotalTokens: 30}, res.Usage, "usage is summed over turns")
	require.Len(t, res.History, 4)

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].ToolConfig, reqs[1].ToolConfig, "the same toolConfig on every turn")
	results := reqs[1].Messages[2]
	assert.Equal(t, types.ConversationRoleUser, results.Role)
	got := map[string]string{}
	for _, r := range resultsOf(t, results) {
		assert.Equal(t, types.ToolResultStatusSuccess, r.Status)
		got[r.ID] = r.Text
	}
	assert.Equal(t, map[string]string{"AB3": "20", "PO9": "60"}, got)
	assertValid(t, c, claude)
}

func resultsOf(t *testing.T, msg types.Message) []result {
	t.Helper()
	return results(t, msg.Content)
}

func TestMultiTurnChat(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.Text("Hi, I'm Claude."),
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 2, "b": 3}}),
		bedrocktest.Text("5."),
	))
	c := converse.New(client, claude, calculator(t))
	_, err := c.Send(context.Background(), "Hello")
	require.NoError(t, err)
	res, err := c.Send(context.Background(), "What is 2+3?")
	require.NoError(t, err)
	assert.Equal(t, "5.", res.Text)
	assert.Len(t, c.History(), 6)
	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	assert.Len(t, reqs[1].Messages, 3, "the second Send continues the history")
	assert.Len(t, reqs[2].Messages, 5)
	assertValid(t, c, claude)
}

func TestStopReasons(t *testing.T) {
	toolUse := types.ContentBlock(&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
		ToolUseId: aws.String("cut"), Name: aws.String("calculator"), Input: nil}})
	tests := []struct {
		stop    types.StopReason
		blocks  []types.ContentBlock
		wantErr error
	}{
		{stop: types.StopReasonEndTurn},
		{stop: types.StopReasonStopSequence},
		{stop: types.StopReasonMaxTokens},
		{stop: types.StopReasonMaxTokens, blocks: []types.ContentBlock{text("Let me"), toolUse}, wantErr: converse.ErrMaxTokens},
		{stop: types.StopReasonGuardrailIntervened},
		{stop: types.StopReasonContentFiltered},
		{stop: types.StopReasonMalformedToolUse, wantErr: converse.ErrMalformedToolUse},
		{stop: types.StopReasonMalformedModelOutput, wantErr: converse.ErrMalformedModelOutput},
		{stop: types.StopReasonModelContextWindowExceeded, wantErr: converse.ErrContextWindowExceeded},
		{stop: "some_future_reason"},
	}
	for _, tt := range tests {
		name := string(tt.stop)
		if tt.blocks != nil {
			name += " inside a tool call"
		}
		t.Run(name, func(t *testing.T) {
			blocks := tt.blocks
			if blocks == nil {
				blocks = []types.ContentBlock{text("partial answer")}
			}
			_, client := serve(t, bedrocktest.Script(bedrocktest.Output(tt.stop, blocks...)))
			var ran atomic.Int32
			calc, err := tools.New("calculator", "Counts calls.", func(context.Context, struct{}) (int, error) {
				ran.Add(1)
				return 0, nil
			})
			require.NoError(t, err)
			reg, err := tools.NewRegistry(calc)
			require.NoError(t, err)
			c := converse.New(client, claude, reg)
			res, err := c.Send(context.Background(), "Go")
			require.NotNil(t, res)
			assert.Equal(t, tt.stop, res.StopReason)
			assert.Zero(t, ran.Load(), "no tool runs")
			if tt.wantErr == nil {
				require.NoError(t, err)
				assert.Equal(t, "partial answer", res.Text)
				assert.Len(t, c.History(), 2)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			assert.Contains(t, err.Error(), "converse: turn 1: ")
			if tt.wantErr == converse.ErrMaxTokens {
				assert.Contains(t, err.Error(), "max tokens")
			}
			assert.Len(t, c.History(), 1, "the prompt is kept, for Resume")
			assertValid(t, c, claude)
		})
	}
}

func TestTurnLimit(t *testing.T) {
	ask := func(id string) *bedrocktest.Reply {
		return bedrocktest.ToolUse("again", bedrocktest.Call{ID: id, Name: "calculator", Input: map[string]any{"a": 1, "b": 1}})
	}
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("first"), ask("a"), ask("b"), ask("c"), bedrocktest.Text("done")))
	c := converse.New(client, claude, calculator(t), func(o *converse.Options) { o.MaxTurns = 3 })
	_, err := c.Send(context.Background(), "hello")
	require.NoError(t, err)
	res, err := c.Send(context.Background(), "loop")
	require.ErrorIs(t, err, converse.ErrMaxTurns)
	assert.Contains(t, err.Error(), "converse: turn 3: ")
	assert.Contains(t, err.Error(), "MaxTurns")
	assert.Equal(t, 3, res.Turns)
	assert.Len(t, srv.Requests(), 4)
	assert.Len(t, c.History(), 7, "the failed Send kept its prompt and both tool exchanges")
	assertValid(t, c, claude)
	assert.True(t, c.State().Stopped, "the turn limit stops the task")

	// The limit ended the task: the next prompt goes to the model at once,
	// beside the last round's results.
	res, err = c.Send(context.Background(), "stop now")
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
	reqs := srv.Requests()
	require.Len(t, reqs, 5)
	requirePromptAfterResults(t, reqs[4], 1, "stop now")
	assertValid(t, c, claude)
}

func TestAPIErrorsAreWrappedAndTyped(t *testing.T) {
	tests := []struct {
		err    *bedrocktest.Error
		target any
	}{
		{bedrocktest.AccessDenied("You don't have access to the model with the specified model ID."), new(*types.AccessDeniedException)},
		{bedrocktest.Validation("The provided model identifier is invalid."), new(*types.ValidationException)},
		{bedrocktest.ResourceNotFound("Model not found."), new(*types.ResourceNotFoundException)},
		{bedrocktest.Throttling(), new(*types.ThrottlingException)},
		{bedrocktest.ServiceUnavailable(), new(*types.ServiceUnavailableException)},
	}
	for _, tt := range tests {
		t.Run(tt.err.Type, func(t *testing.T) {
			srv := bedrocktest.NewServer(bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "x", Name: "calculator", Input: map[string]any{"a": 1, "b": 1}}),
				&bedrocktest.Reply{}))
			defer srv.Close()
			failing := bedrocktest.HandlerFunc(func(ctx context.Context, r *bedrocktest.Request) (*bedrocktest.Reply, error) {
				if len(r.Messages) > 1 {
					return nil, tt.err
				}
				return bedrocktest.ToolUse("", bedrocktest.Call{ID: "x", Name: "calculator", Input: map[string]any{"a": 1, "b": 1}}), nil
			})
			_, client := serve(t, failing)
			client = bedrockruntime.New(client.Options(), func(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} })
			c := converse.New(client, claude, calculator(t))
			res, err := c.Send(context.Background(), "hi")
			require.Error(t, err)
			assert.Contains(t, err.Error(), "converse: turn 2: ")
			assert.True(t, errors.As(err, tt.target), "%v is not a %T", err, tt.target)
			assert.Equal(t, 1, res.Turns)
			assert.Len(t, res.History, 3, "the attempted history is reported")
			assert.Len(t, c.History(), 3, "the tool exchange is kept")
		})
	}
}

func TestThrottledCallSucceedsAfterRetries(t *testing.T) {
	srv, client := serve(t, bedrocktest.Throttle(2, bedrocktest.Script(bedrocktest.Text("made it"))))
	res, err := converse.New(client, claude, nil).Send(context.Background(), "hi")
	require.NoError(t, err)
	assert.Equal(t, "made it", res.Text)
	assert.Len(t, srv.Requests(), 3, "two throttled attempts, then success")
}

func TestToolStatusByModelFamily(t *testing.T) {
	tests := []struct {
		model      string
		mode       *bool
		wantStatus bool
	}{
		{claude, nil, true},
		{"arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0", nil, true},
		{"eu.amazon.nova-pro-v1:0", nil, true},
		{"meta.llama3-1-70b-instruct-v1:0", nil, false},
		{"mistral.mistral-large-2407-v1:0", nil, false},
		{"cohere.command-r-plus-v1:0", nil, false},
		{claude, aws.Bool(false), false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(
				bedrocktest.ToolUse("Adding.", bedrocktest.Call{ID: "functions.calculator:0", Name: "calculator", Input: map[string]any{"a": 1, "b": 0, "operation": "divide"}}),
				bedrocktest.Text("Cannot divide by zero."),
			))
			res, err := converse.New(client, tt.model, calculator(t),
				func(o *converse.Options) { o.Tools.Status = tt.mode }).Send(context.Background(), "1/0?")

			require.NoError(t, err, "the server enforces Bedrock's rules for this family")
			assert.Equal(t, "Cannot divide by zero.", res.Text)
			r := resultsOf(t, srv.Requests()[1].Messages[2])[0]
			assert.Equal(t, "functions.calculator:0", r.ID)
			assert.True(t, strings.HasPrefix(r.Text, "Error: "), r.Text)
			if tt.wantStatus {
				assert.Equal(t, types.ToolResultStatusError, r.Status)
			} else {
				assert.Empty(t, r.Status)
			}
		})
	}
}

func TestEvents(t *testing.T) {
	_, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("Adding.", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}}),
		bedrocktest.Text("3."),
	))
	var mu sync.Mutex
	var got []string
	_, err := converse.New(client, claude, calculator(t), func(o *converse.Options) {
		o.OnEvent = func(ev converse.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch ev := ev.(type) {
			case converse.Text:
				got = append(got, "text "+ev.Text)
			case converse.ToolStart:
				got = append(got, "start "+ev.Name+" "+ev.ID+" "+string(ev.Input))
			case converse.ToolEnd:
				got = append(got, "end "+ev.ID+" "+string(ev.Status)+" "+string(ev.Output))
				assert.Positive(t, ev.Duration)
			case converse.TurnEnd:
				got = append(got, "turn "+string(ev.StopReason))
				assert.Equal(t, 15, ev.Usage.TotalTokens)
			}
		}
	}).Send(context.Background(), "1+2?")

	require.NoError(t, err)
	assert.Equal(t, []string{
		"text Adding.", "turn tool_use",
		`start calculator t1 {"a":1,"b":2}`, "end t1 success 3",
		"text 3.", "turn end_turn",
	}, got)
}

func TestForcedToolChoiceOnlyOnFirstTurn(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}}),
		bedrocktest.Text("3."),
	))
	_, err := converse.New(client, claude, calculator(t), func(o *converse.Options) {
		o.ToolChoice = &types.ToolChoiceMemberAny{}
	}).Send(context.Background(), "1+2?")

	require.NoError(t, err)
	reqs := srv.Requests()
	assert.IsType(t, &types.ToolChoiceMemberAny{}, reqs[0].ToolConfig.ToolChoice)
	assert.Nil(t, reqs[1].ToolConfig.ToolChoice)
	assert.Len(t, reqs[1].ToolConfig.Tools, 1)
}

func TestJSONResults(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}}),
		bedrocktest.Text("3."),
	))
	_, err := converse.New(client, claude, calculator(t), func(o *converse.Options) { o.Tools.JSONContent = true }).Send(context.Background(), "1+2?")
	require.NoError(t, err)
	tr := srv.Requests()[1].Messages[2].Content[0].(*types.ContentBlockMemberToolResult)
	j, ok := tr.Value.Content[0].(*types.ToolResultContentBlockMemberJson)
	require.True(t, ok, "%T", tr.Value.Content[0])
	b, err := j.Value.MarshalSmithyDocument()
	require.NoError(t, err)
	assert.JSONEq(t, `{"result":3}`, string(b))
}

// TestToolCannotChangeTheHistory: the input a raw tool is handed is its
// own; the history's document, sent again at every turn, keeps the model's.
func TestToolCannotChangeTheHistory(t *testing.T) {
	scribble, err := tools.NewRaw("scribble", "Scribbles on its input.", json.RawMessage(`{"type":"object"}`),
		func(_ context.Context, input json.RawMessage) (any, error) {
			for i := range input {
				input[i] = ' '
			}
			return "done", nil
		})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(scribble)
	require.NoError(t, err)
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "scribble", Input: map[string]any{"a": 1}}),
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t2", Name: "scribble", Input: map[string]any{"b": 2}}),
		bedrocktest.Text("Done."),
	))
	_, err = converse.New(client, claude, reg).Send(context.Background(), "Scribble.")
	require.NoError(t, err)
	last := string(srv.Requests()[2].Body)
	assert.Contains(t, last, `"input":{"a":1}`)
	assert.Contains(t, last, `"input":{"b":2}`)
}

func TestCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block, err := tools.New("block", "Blocks until cancelled.", func(ctx context.Context, _ struct{}) (int, error) {
		cancel()
		<-ctx.Done()
		return 0, ctx.Err()
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(block)
	require.NoError(t, err)
	_, client := serve(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "b", Name: "block", Input: map[string]any{}})))
	c := converse.New(client, claude, reg)
	_, err = c.Send(ctx, "go")
	require.ErrorIs(t, err, context.Canceled)
	assert.Len(t, c.History(), 3, "the tool exchange, answered as cancelled, is kept")
}

func TestTextIsNeverMixedWithToolResults(t *testing.T) {
	// Mistral rejects text next to tool results; bedrocktest enforces it.
	_, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("Let me compute.", bedrocktest.Call{ID: "a1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}}),
		bedrocktest.Text("3."),
	))
	res, err := converse.New(client, "mistral.mistral-large-2407-v1:0", calculator(t)).Send(context.Background(), "1+2?")
	require.NoError(t, err)
	assert.Equal(t, "3.", res.Text)
}

// TestHistoryStaysValidAfterOddAnswers: answers that Bedrock itself sends
// but would reject if echoed as they are.
func TestHistoryStaysValidAfterOddAnswers(t *testing.T) {
	strayToolUse := &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
		ToolUseId: aws.String("stray"), Name: aws.String("calculator"), Input: documentOf(map[string]any{"a": 1, "b": 1})}}
	tests := []struct {
		name        string
		reply       *bedrocktest.Reply
		wantHistory int
	}{
		{"blank text before a tool call", bedrocktest.Output(types.StopReasonToolUse, text("\n\n"),
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("t1"), Name: aws.String("calculator"),
				Input: documentOf(map[string]any{"a": 1, "b": 1})}}), 4},
		{"a tool call in a final answer", bedrocktest.Output(types.StopReasonEndTurn, text("Done."), strayToolUse), 2},
		{"a filtered answer with no content", bedrocktest.Output(types.StopReasonContentFiltered), 0},
		{"an answer of reasoning alone", bedrocktest.Output(types.StopReasonEndTurn,
			&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: []byte("x")}}, text(" ")), 0},
		{"a tool call without input", bedrocktest.Output(types.StopReasonToolUse,
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String("t1"), Name: aws.String("calculator")}}), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, client := serve(t, bedrocktest.Script(tt.reply, bedrocktest.Text("Finally.")))
			var logs bytes.Buffer
			c := converse.New(client, claude, calculator(t), func(o *converse.Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			_, err := c.Send(context.Background(), "go")
			require.NoError(t, err)
			assert.Len(t, c.History(), tt.wantHistory)
			assertValid(t, c, claude)
			if tt.name == "a tool call in a final answer" {
				assert.Contains(t, logs.String(), "the final answer asks for tool calls, which are not run", "the dropped call is told")
			} else {
				assert.NotContains(t, logs.String(), "final answer asks")
			}
		})
	}
}

func TestSendRejectsWhatBedrockWould(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("unused")))
	c := converse.New(client, claude, nil)
	_, err := c.Send(context.Background(), "  \n")
	assert.ErrorContains(t, err, "blank")
	_, err = c.SendMessage(context.Background(), types.Message{})
	assert.ErrorContains(t, err, "no content")
	_, err = c.SendMessage(context.Background(), types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberDocument{Value: types.DocumentBlock{
		Format: types.DocumentFormatTxt, Name: aws.String("notes"), Source: &types.DocumentSourceMemberBytes{Value: []byte("x")}}}}})
	assert.ErrorContains(t, err, "no text block")
	_, err = c.SendMessage(context.Background(), types.Message{Content: []types.ContentBlock{text("read it"), &types.ContentBlockMemberDocument{Value: types.DocumentBlock{
		Format: types.DocumentFormatPdf, Name: aws.String("report.pdf"), Source: &types.DocumentSourceMemberBytes{Value: []byte("%PDF-")}}}}})
	assert.ErrorContains(t, err, `the message's document 1 is named "report.pdf": Bedrock takes`)
	for _, tc := range []struct {
		block types.ContentBlock
		want  string
	}{
		{&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: testimage.JPEG(t, 4, 4)}}},
			"the message's image 1: a jpeg image labelled png"},
		{&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{}}},
			"the message's image 1: empty"},
		{&types.ContentBlockMemberImage{Value: types.ImageBlock{Format: types.ImageFormatPng, Source: &types.ImageSourceMemberBytes{Value: testimage.Plain(t, 4, 4)[:40]}}},
			"the message's image 1: a truncated png image, no IEND chunk"},
		{&types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatPdf, Name: aws.String("report"), Source: &types.DocumentSourceMemberBytes{Value: []byte("<html>404</html>")}}},
			"the message's document 1: not a pdf document"},
	} {
		_, err = c.SendMessage(context.Background(), types.Message{Content: []types.ContentBlock{text("look"), tc.block}})
		assert.ErrorContains(t, err, tc.want)
	}
	_, err = c.SendMessage(context.Background(), types.Message{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{text("hi")}})
	assert.ErrorContains(t, err, "user message")
	assert.Empty(t, srv.Requests(), "nothing reached Bedrock")
}

// TestSendMessageNumbersARepeatedDocumentName: a document the user sends under
// a name the history has already, from a tool or an earlier message, or twice
// in one message, is numbered, as a tool's is. Bedrock rejects a request that
// holds a name twice, and every later one.
func TestSendMessageNumbersARepeatedDocumentName(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("read"), bedrocktest.Text("read again")))
	c := converse.New(client, claude, nil)
	doc := func(name string) types.ContentBlock {
		return &types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatTxt, Name: aws.String(name), Source: &types.DocumentSourceMemberBytes{Value: []byte("x")}}}
	}
	_, err := c.SendMessage(context.Background(), types.Message{Content: []types.ContentBlock{text("read it"), doc("report")}})
	require.NoError(t, err)
	_, err = c.SendMessage(context.Background(), types.Message{Content: []types.ContentBlock{text("and these"), doc("Report"), doc("report")}})
	require.NoError(t, err, "bedrocktest rejects a name twice in a request")
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	var names []string
	for _, b := range reqs[1].Messages[2].Content {
		if d, ok := b.(*types.ContentBlockMemberDocument); ok {
			names = append(names, aws.ToString(d.Value.Name))
		}
	}
	assert.Equal(t, []string{"Report 2", "report 3"}, names)
	assertValid(t, c, claude)
}

func TestConcurrentSendsAreSerialized(t *testing.T) {
	var replies []*bedrocktest.Reply
	for i := range 8 {
		replies = append(replies,
			bedrocktest.ToolUse("", bedrocktest.Call{ID: fmt.Sprintf("t%d", i), Name: "calculator", Input: map[string]any{"a": i, "b": 1}}),
			bedrocktest.Text(fmt.Sprintf("answer %d", i)))
	}
	srv, client := serve(t, bedrocktest.Script(replies...))
	c := converse.New(client, claude, calculator(t))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			_, err := c.Send(context.Background(), fmt.Sprintf("question %d", i))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Len(t, c.History(), 32)
	assert.Len(t, srv.Requests(), 16, "every request was valid: the Sends did not interleave")
	assertValid(t, c, claude)
}

// TestResultHistoryIsNotOverwritten: Sends append in place to the
// conversation's history; the Results of earlier Sends, failed or not, must
// keep what they hold.
func TestResultHistoryIsNotOverwritten(t *testing.T) {
	calls := 0
	h := bedrocktest.HandlerFunc(func(ctx context.Context, r *bedrocktest.Request) (*bedrocktest.Reply, error) {
		calls++
		switch calls {
		case 1:
			return bedrocktest.ToolUse("", bedrocktest.Call{ID: "x", Name: "calculator", Input: map[string]any{"a": 1, "b": 1}}), nil
		case 4:
			return nil, bedrocktest.Validation("boom")
		}
		return bedrocktest.Text(fmt.Sprintf("answer %d", calls)), nil
	})
	_, client := serve(t, h)
	c := converse.New(client, claude, calculator(t))
	var results []*converse.Result
	var before [][]byte
	// The history grows to 4 messages (capacity 4), then 6 (capacity 8):
	// the third Send appends in place, fails, and the fourth appends over it.
	for i, prompt := range []string{"one", "two", "three", "four"} {
		res, err := c.Send(context.Background(), prompt) // the fourth replaces the third's unanswered prompt
		if i == 2 {
			require.Error(t, err)
		} else {
			require.NoError(t, err)
		}
		results = append(results, res)
		b, err := wirejson.MarshalMessages(res.History)
		require.NoError(t, err)
		before = append(before, b)
	}
	for i, res := range results {
		after, err := wirejson.MarshalMessages(res.History)
		require.NoError(t, err)
		assert.JSONEq(t, string(before[i]), string(after), "Result %d changed", i+1)
	}
	assert.Len(t, results[2].History, 7)
	assert.Len(t, c.History(), 8)
}

// within fails the test if f does not return: a deadlock shows as a
// failure rather than a hung test. The bound is far beyond any honest wait.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s never returned", what)
	}
}

// TestHistoryFromOnEvent: a UI that redraws the transcript on TurnEnd or
// ToolEnd calls History from OnEvent. It must not deadlock Send. At TurnEnd
// History ends with the reply the event reports (the tool_use turn, then the
// final answer).
func TestHistoryFromOnEvent(t *testing.T) {
	_, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "calculator", Input: map[string]any{"a": 1, "b": 2}}),
		bedrocktest.Text("3"), bedrocktest.Text("still 3")))
	var seen []int
	var c *converse.Conversation
	c = converse.New(client, claude, calculator(t), func(o *converse.Options) {
		o.OnEvent = func(ev converse.Event) {
			switch ev.(type) {
			case converse.TurnEnd, converse.ToolEnd:
				seen = append(seen, len(c.History()))
			}
		}
	})
	within(t, "Send", func() {
		_, err := c.Send(context.Background(), "1+2")
		require.NoError(t, err)
		_, err = c.Send(context.Background(), "and again?")
		require.NoError(t, err)
	})
	assert.Equal(t, []int{2, 2, 4, 6}, seen, "History during a Send is the history at the last step boundary, the reply kept before TurnEnd")
}

// TestHistoryDoesNotWaitForTheModel: History from another goroutine
// returns while a Send waits for the model; the model's answer waits for
// History to have returned, so a History that waited would never return.
func TestHistoryDoesNotWaitForTheModel(t *testing.T) {
	inCall, historyRead := make(chan struct{}), make(chan struct{})
	calls := 0
	h := bedrocktest.HandlerFunc(func(ctx context.Context, r *bedrocktest.Request) (*bedrocktest.Reply, error) {
		calls++
		if calls == 2 {
			close(inCall)
			<-historyRead
		}
		return bedrocktest.Text(fmt.Sprintf("answer %d", calls)), nil
	})
	_, client := serve(t, h)
	answer := sync.OnceFunc(func() { close(historyRead) })
	t.Cleanup(answer) // before the server closes, should History fail
	c := converse.New(client, claude, nil)
	_, err := c.Send(context.Background(), "one")
	require.NoError(t, err)
	sent := make(chan error)
	go func() {
		_, err := c.Send(context.Background(), "two")
		sent <- err
	}()
	<-inCall
	var during []types.Message
	within(t, "History", func() { during = c.History() })
	answer()
	require.NoError(t, <-sent)
	assert.Len(t, during, 3, "the prompt was kept before the model call")
	assert.Len(t, c.History(), 4)
}

// TestAbandonedCallsCountAcrossSends: with ToolConcurrency 1, a call of one
// Send abandoned at its timeout keeps the slot in the next Send, whose call
// is answered as timed out waiting for it.
func TestAbandonedCallsCountAcrossSends(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var high atomic.Int32
	reg, err := tools.NewRegistry(stuckTool(t, 20*time.Millisecond, release, &high))
	require.NoError(t, err)
	srv, client := serve(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "s1", Name: "stuck"}), bedrocktest.Text("it timed out"),
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "s2", Name: "stuck"}), bedrocktest.Text("again")))
	c := converse.New(client, claude, reg, func(o *converse.Options) { o.Tools.Concurrency = 1 })
	for _, prompt := range []string{"one", "two"} {
		_, err := c.Send(context.Background(), prompt)
		require.NoError(t, err)
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, []result{{"s1", `Error: tool "stuck" timed out after 20ms: context deadline exceeded`, types.ToolResultStatusError}},
		resultsOf(t, reqs[1].Messages[2]))
	assert.Equal(t, []result{{"s2", `Error: tool "stuck" timed out after 20ms waiting for a free slot, all held by ` +
		`tool "stuck" (toolUseId "s1", answered already and still running): context deadline exceeded`, types.ToolResultStatusError}},
		resultsOf(t, reqs[3].Messages[6]))
	assert.Equal(t, int32(1), high.Load())
}

// TestToolOutputIsCapped: a tool returning 100 MB does not make a 100 MB
// request; the model gets the first MiB and a marker. (TestExecuteOutputLimit
// covers the other modes.)
func TestToolOutputIsCapped(t *testing.T) {
	huge, err := tools.New("huge", "Returns 100 MB.", func(context.Context, struct{}) (string, error) {
		return strings.Repeat("x", 100<<20), nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(huge)
	require.NoError(t, err)
	srv, client := serve(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "h", Name: "huge"}), bedrocktest.Text("big")))
	var truncated bool
	_, err = converse.New(client, claude, reg, func(o *converse.Options) {
		o.OnEvent = func(ev converse.Event) {
			if end, ok := ev.(converse.ToolEnd); ok {
				truncated = end.Truncated
			}
		}
	}).Send(context.Background(), "go")

	require.NoError(t, err)
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Less(t, len(reqs[1].Body), 1<<20+64<<10)
	got := resultsOf(t, reqs[1].Messages[2])
	require.Len(t, got, 1)
	assert.True(t, strings.HasSuffix(got[0].Text, "x… [truncated: 104857602 bytes, first 1048576 kept]"), got[0].Text[len(got[0].Text)-80:])
	assert.True(t, truncated)
}
