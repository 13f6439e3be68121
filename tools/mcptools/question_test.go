package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
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
		//lint:ignore SA1019 a deprecated request, which servers may still send
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

// Over a stateful HTTP session the go-sdk server speaks a protocol before
// 2026-07-28 and asks with an elicitation/create request. It does so for a
// tool that answers with an input-required result (which the SDK turns
// into the request) and for one that makes the request itself. The call
// pauses, and its retry gives the request made again the answer.
func TestServerQuestionByRequest(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	var runs atomic.Int32
	mcp.AddTool(srv, &mcp.Tool{Name: "result"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		runs.Add(1)
		resp, ok := req.Params.InputResponses["q"].(*mcp.ElicitResult)
		if !ok {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "Sure?"}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: resp.Action}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "request"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		runs.Add(1)
		resp, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Sure?",
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"n": {Type: "integer"}}}})
		if err != nil {
			return nil, nil, err
		}
		b, _ := json.Marshal(resp.Content)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: resp.Action + " " + string(b)}}}, nil, nil
	})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(web.Close)
	_, reg := connect(t, mcptools.Server{Name: "s", URL: web.URL})
	for _, tt := range []struct {
		tool, want string
		runs       int32 // the SDK runs an input-required tool again with the request's answer
	}{{"s__result", "accept", 3}, {"s__request", `accept {"n":3}`, 2}} {
		t.Run(tt.tool, func(t *testing.T) {
			runs.Store(0)
			tool, ok := reg.Lookup(tt.tool)
			require.True(t, ok)
			_, err := tool.Call(context.Background(), json.RawMessage(`{}`))
			var asks *tools.InputRequiredError
			require.ErrorAs(t, err, &asks)
			assert.Equal(t, "Sure?", asks.Question.Message)
			out, err := tool.Call(tools.WithAnswer(context.Background(), tools.Answer{Question: asks.Question, Action: tools.Accept, Content: json.RawMessage(`{"n":3}`)}), json.RawMessage(`{}`))
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
			assert.Equal(t, tt.runs, runs.Load(), "the tool ran again up to its question")
		})
	}
}

// A tool that makes two requests in a row gets, in the call made again
// after the second question, the first answer again and then the second.
func TestServerQuestionsByRequestInARow(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "two"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		var got []string
		for _, msg := range []string{"First?", "Second?"} {
			resp, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: &jsonschema.Schema{Type: "object"}})
			if err != nil {
				return nil, nil, err
			}
			got = append(got, resp.Action)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: got[0] + " " + got[1]}}}, nil, nil
	})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(web.Close)
	_, reg := connect(t, mcptools.Server{Name: "s", URL: web.URL})
	tool, ok := reg.Lookup("s__two")
	require.True(t, ok)
	ctx := context.Background()
	var out any
	var err error
	for _, action := range []tools.Action{tools.Decline, tools.Cancel} {
		_, err = tool.Call(ctx, json.RawMessage(`{}`))
		var asks *tools.InputRequiredError
		require.ErrorAs(t, err, &asks)
		ctx = tools.WithAnswer(context.Background(), tools.Answer{Question: asks.Question, Action: action})
	}
	out, err = tool.Call(ctx, json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, "decline cancel", out)
}
