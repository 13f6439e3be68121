package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// asking serves a tool "ask" that answers every call with requests, as an
// input-required result, until it gets input responses, which it echoes.
func asking(t *testing.T, requests mcp.InputRequestMap) *tools.Registry {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if len(req.Params.InputResponses) == 0 {
			return &mcp.CallToolResult{InputRequests: requests, RequestState: "st"}, nil, nil
		}
		b, err := json.Marshal(map[string]any{"responses": req.Params.InputResponses, "state": req.Params.RequestState})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, err
	})
	_, reg := connect(t, inMemory(t, "s", srv))
	return reg
}

func TestServerQuestionAndRetry(t *testing.T) {
	reg := asking(t, mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "Sure?", RequestedSchema: map[string]any{"type": "object"}}})
	tool, ok := reg.Lookup("s__ask")
	require.True(t, ok)
	_, err := tool.Call(context.Background(), json.RawMessage(`{}`))
	var asks *tools.InputRequiredError
	require.ErrorAs(t, err, &asks)
	assert.Equal(t, "Sure?", asks.Question.Message)
	assert.JSONEq(t, `{"type":"object"}`, string(asks.Question.Schema))

	for _, a := range []tools.Answer{
		{Question: asks.Question, Action: tools.Accept, Content: json.RawMessage(`{"ok":true}`)},
		{Question: asks.Question, Action: tools.Cancel},
	} {
		out, err := tool.Call(tools.WithAnswer(context.Background(), a), json.RawMessage(`{}`))
		require.NoError(t, err)
		want := `{"responses":{"q":{"action":"` + string(a.Action) + `"}},"state":"st"}`
		if a.Action == tools.Accept {
			want = `{"responses":{"q":{"action":"accept","content":{"ok":true}}},"state":"st"}`
		}
		assert.JSONEq(t, want, out.(string))
	}
}

// Input the client cannot ask the user for fails the call, saying why.
func TestServerQuestionsThatCannotBeAsked(t *testing.T) {
	tests := []struct {
		name     string
		requests mcp.InputRequestMap
		want     string
	}{
		{"busy", mcp.InputRequestMap{}, "is busy"},
		{"two at once", mcp.InputRequestMap{"a": &mcp.ElicitParams{Message: "a"}, "b": &mcp.ElicitParams{Message: "b"}}, "asked 2 questions at once"},
		{"a URL", mcp.InputRequestMap{"u": &mcp.ElicitParams{Mode: "url", Message: "Log in", URL: "https://example.com/", ElicitationID: "e1"}}, "visit a URL"},
		{"roots", mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}, "of a kind this client does not give"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, asking(t, tt.requests), "s__ask", `{}`)
			require.ErrorIs(t, err, mcptools.ErrToolFailed)
			assert.Contains(t, err.Error(), tt.want)
			var asks *tools.InputRequiredError
			assert.False(t, errors.As(err, &asks))
		})
	}
}
