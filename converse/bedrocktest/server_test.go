package bedrocktest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/recording"
)

const testModel = "anthropic.claude-3-5-sonnet-20240620-v1:0"

func userText(text string) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}}
}

func weatherTools() *types.ToolConfiguration {
	return &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name: aws.String("get_weather"),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
		})},
	}}}}
}

func TestConverseText(t *testing.T) {
	srv := NewServer(Script(Text("Hello there")))
	defer srv.Close()

	out, err := srv.Client().Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId:  aws.String(testModel),
		Messages: []types.Message{userText("hi")},
		System:   []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "be brief"}},
		InferenceConfig: &types.InferenceConfiguration{
			MaxTokens: aws.Int32(100),
		},
	})
	require.NoError(t, err)
	assert.Equal(t, types.StopReasonEndTurn, out.StopReason)
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	assert.Equal(t, types.ConversationRoleAssistant, msg.Role)
	require.Len(t, msg.Content, 1)
	assert.Equal(t, "Hello there", msg.Content[0].(*types.ContentBlockMemberText).Value)
	assert.Equal(t, int32(15), aws.ToInt32(out.Usage.TotalTokens))
	assert.Equal(t, int64(100), aws.ToInt64(out.Metrics.LatencyMs))

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, recording.OpConverse, reqs[0].Operation)
	assert.Equal(t, testModel, aws.ToString(reqs[0].ModelId))
	require.Len(t, reqs[0].Messages, 1)
	assert.Equal(t, "hi", reqs[0].Messages[0].Content[0].(*types.ContentBlockMemberText).Value)
	assert.Equal(t, "be brief", reqs[0].System[0].(*types.SystemContentBlockMemberText).Value)
	assert.Equal(t, int32(100), aws.ToInt32(reqs[0].InferenceConfig.MaxTokens))
	assert.Contains(t, string(reqs[0].Body), `"messages"`)
}

func TestConverseModelIDEscaped(t *testing.T) {
	ids := []string{
		"us.anthropic.claude-3-5-haiku-20241022-v1:0",
		"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0",
		"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3",
	}
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			srv := NewServer(Script(Text("ok")))
			defer srv.Close()
			_, err := srv.Client().Converse(context.Background(), &bedrockruntime.ConverseInput{
				ModelId:  aws.String(id),
				Messages: []types.Message{userText("hi")},
			})
			require.NoError(t, err)
			assert.Equal(t, id, aws.ToString(srv.Requests()[0].ModelId))
		})
	}
}

func TestToolUseRoundTrip(t *testing.T) {
	srv := NewServer(Script(
		ToolUse("Let me check.", Call{ID: "tooluse_1", Name: "get_weather", Input: map[string]any{"city": "Paris"}}),
		Text("It is sunny in Paris."),
	))
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	history := []types.Message{userText("Weather in Paris?")}
	out, err := client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(testModel), Messages: history, ToolConfig: weatherTools(),
	})
	require.NoError(t, err)
	assert.Equal(t, types.StopReasonToolUse, out.StopReason)
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	require.Len(t, msg.Content, 2)
	assert.Equal(t, "Let me check.", msg.Content[0].(*types.ContentBlockMemberText).Value)
	tu := msg.Content[1].(*types.ContentBlockMemberToolUse).Value
	assert.Equal(t, "tooluse_1", aws.ToString(tu.ToolUseId))
	assert.Equal(t, "get_weather", aws.ToString(tu.Name))
	assert.Equal(t, types.ToolUseType("tool_use"), tu.Type, "Bedrock marks client tool uses")
	var input struct{ City string }
	require.NoError(t, tu.Input.UnmarshalSmithyDocument(&input))
	assert.Equal(t, "Paris", input.City)

	// Echoing the block with its type is what Bedrock rejects.
	_, err = client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId:    aws.String(testModel),
		Messages:   append(history, msg, toolResultMessage("tooluse_1", "sunny")),
		ToolConfig: weatherTools(),
	})
	var ve *types.ValidationException
	require.ErrorAs(t, err, &ve)
	assert.Contains(t, ve.ErrorMessage(), "toolUse.type")

	tu.Type = ""
	msg.Content[1] = &types.ContentBlockMemberToolUse{Value: tu}
	history = append(history, msg, toolResultMessage("tooluse_1", "sunny"))
	out, err = client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(testModel), Messages: history, ToolConfig: weatherTools(),
	})
	require.NoError(t, err)
	assert.Equal(t, types.StopReasonEndTurn, out.StopReason)

	reqs := srv.Requests()
	require.Len(t, reqs, 3)
	last := reqs[2].Messages
	require.Len(t, last, 3)
	tr := last[2].Content[0].(*types.ContentBlockMemberToolResult).Value
	assert.Equal(t, "tooluse_1", aws.ToString(tr.ToolUseId))
	assert.Equal(t, "sunny", tr.Content[0].(*types.ToolResultContentBlockMemberText).Value)
}

func toolResultMessage(id, text string) types.Message {
	return types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
		&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
			ToolUseId: aws.String(id),
			Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: text}},
		}},
	}}
}

func TestBadRoute(t *testing.T) {
	srv := NewServer(Script())
	defer srv.Close()
	for _, path := range []string{"/model/x/invoke", "/foo", "/model//converse"} {
		resp, err := srv.HTTPClient().Post(srv.URL+path, "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
		assert.Equal(t, "UnknownOperationException", resp.Header.Get("X-Amzn-ErrorType"), path)
	}
}

func TestMalformedBody(t *testing.T) {
	srv := NewServer(Script())
	defer srv.Close()
	resp, err := srv.HTTPClient().Post(srv.URL+"/model/m/converse", "application/json", strings.NewReader("{not json"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "ValidationException", resp.Header.Get("X-Amzn-ErrorType"))
}

// Mistakes of the test fail the call at once: the SDK's default retryer
// does not retry them, so the server sees exactly one request.
func TestSetupErrorsAreNotRetried(t *testing.T) {
	tests := []struct {
		name    string
		handler Handler
		want    string
	}{
		{"script exhausted", Script(), "bedrocktest: script exhausted: call 1 (Converse " + testModel + ") but only 0 replies"},
		{"handler error", HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) {
			return nil, errors.New("boom")
		}), "bedrocktest: handler error: boom"},
		{"nil reply", HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) {
			return nil, nil
		}), "bedrocktest: handler returned a nil Reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(tt.handler)
			defer srv.Close()
			_, err := srv.Client().Converse(context.Background(), &bedrockruntime.ConverseInput{
				ModelId: aws.String(testModel), Messages: []types.Message{userText("hi")},
			})
			var ve *types.ValidationException
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tt.want, ve.ErrorMessage())
			assert.Len(t, srv.Requests(), 1)
		})
	}
}

func noRetry(o *bedrockruntime.Options) {
	o.Retryer = aws.NopRetryer{}
}

func TestRawReply(t *testing.T) {
	raw := []byte(`{"metrics":{"latencyMs":3},"output":{"message":{"content":[{"text":"recorded"}],"role":"assistant"}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}`)
	srv := NewServer(Script(&Reply{Raw: raw}, &Reply{Raw: raw}))
	defer srv.Close()
	out, err := srv.Client().Converse(context.Background(), converseInput())
	require.NoError(t, err)
	assert.Equal(t, "recorded", out.Output.(*types.ConverseOutputMemberMessage).Value.Content[0].(*types.ContentBlockMemberText).Value)
	assert.Equal(t, int64(3), aws.ToInt64(out.Metrics.LatencyMs))

	// A recorded Converse body can answer a stream too.
	s := converseStream(t, srv.Client(), streamInput(userText("hi")))
	require.NoError(t, s.err)
	assert.Equal(t, "recorded", s.texts[0])
	assert.Equal(t, types.StopReasonEndTurn, s.stop)
}

// TestStreamsAfterConverseOnOneClient guards the loopback trap that the
// server's HTTP client and the HTTPClient function work around: streams
// following Converse calls on the same client must not lose their
// connection.
func TestStreamsAfterConverseOnOneClient(t *testing.T) {
	const rounds = 200
	clients := map[string]func(*Server) *bedrockruntime.Client{
		"Server.Client": func(srv *Server) *bedrockruntime.Client { return srv.Client(noRetry) },
		"recording.PlainBodies": func(srv *Server) *bedrockruntime.Client {
			cfg := srv.Config()
			cfg.HTTPClient = nil
			return bedrockruntime.NewFromConfig(cfg, noRetry, func(o *bedrockruntime.Options) {
				o.HTTPClient = recording.PlainBodies(nil)
			})
		},
	}
	for name, newClient := range clients {
		t.Run(name, func(t *testing.T) {
			replies := make([]*Reply, 0, 2*rounds)
			for range rounds {
				replies = append(replies, Text("plain"), Text("streamed"))
			}
			srv := NewServer(Script(replies...))
			defer srv.Close()
			client := newClient(srv)
			for i := range rounds {
				_, err := client.Converse(context.Background(), converseInput())
				require.NoError(t, err, "round %d: Converse", i)
				s := converseStream(t, client, streamInput(userText("hi")))
				require.NoError(t, s.err, "round %d: stream", i)
				require.Equal(t, "streamed", s.texts[0], "round %d: stream", i)
			}
		})
	}
}
