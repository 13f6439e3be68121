package converse_test

import (
	"context"
	"encoding/json"
	"os"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// deployQuestion is the question the deploy tool asks: hostile text, for
// the terminal's filter.
const deployQuestion = "Deploy where?\x1b[2J"

// deployServer is an official go-sdk MCP server whose deploy tool asks the
// user, through the 2026-07-28 input-required result, where to deploy;
// calls counts the tool's runs.
func deployServer(calls *atomic.Int32) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "deployer", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "required": []any{"env"},
		"properties": map[string]any{"env": map[string]any{"type": "string", "enum": []any{"staging", "production"}}}}
	mcp.AddTool(srv, &mcp.Tool{Name: "deploy", Description: "Deploys."}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		calls.Add(1)
		resp, ok := req.Params.InputResponses["where"].(*mcp.ElicitResult)
		if !ok || req.Params.RequestState != "deploy-1" {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"where": &mcp.ElicitParams{Message: deployQuestion, RequestedSchema: schema}},
				RequestState: "deploy-1"}, nil, nil
		}
		text := "the user chose " + resp.Action
		if resp.Action == "accept" {
			text = "deployed to " + resp.Content["env"].(string)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	return srv
}

// deployTools connects to srv in process and returns its tools.
func deployTools(t *testing.T, srv *mcp.Server) *tools.Registry {
	t.Helper()
	reg := new(tools.Registry)
	b, err := mcptools.Connect(context.Background(), reg, mcptools.Server{Name: "ops", Transport: func() mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), server, nil)
		assert.NoError(t, err)
		t.Cleanup(func() { _ = ss.Close() })
		return client
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return reg
}

func deployScript() bedrocktest.Handler {
	return bedrocktest.Script(bedrocktest.ToolUse("Deploying.", bedrocktest.Call{ID: "d1", Name: "ops__deploy", Input: map[string]any{}}), bedrocktest.Text("done"))
}

func TestElicitationAnsweredInProcess(t *testing.T) {
	tests := []struct {
		name     string
		decision converse.Decision
		want     string // what the model sees, in the second request
	}{
		{"accept", converse.Call{}.Accept(json.RawMessage(`{"env":"staging"}`)), "deployed to staging"},
		{"decline", converse.Call{}.Decline(), "the user chose decline"},
		{"cancel", converse.Call{}.Dismiss(), "the user chose cancel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv, client := serve(t, deployScript())
			var ends []converse.ToolEnd
			var decided []converse.ApprovalDecided
			c := converse.New(client, claude, deployTools(t, deployServer(&calls)), func(o *converse.Options) {
				o.OnEvent = func(ev converse.Event) {
					switch ev := ev.(type) {
					case converse.ToolEnd:
						ends = append(ends, ev)
					case converse.ApprovalDecided:
						decided = append(decided, ev)
					}
				}
				o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
					require.NotNil(t, call.Question)
					assert.Equal(t, deployQuestion, call.Question.Message)
					assert.JSONEq(t, `{"type":"object","required":["env"],"properties":{"env":{"type":"string","enum":["staging","production"]}}}`, string(call.Question.Schema))
					return tt.decision, nil
				}
			})
			res, err := c.Send(context.Background(), "deploy it")
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text)
			assert.Equal(t, int32(2), calls.Load(), "asked, then retried with the answer")
			assert.Contains(t, string(srv.Requests()[1].Body), tt.want)
			require.Len(t, ends, 2, "each run of the call ends")
			var asks *tools.InputRequiredError
			assert.ErrorAs(t, ends[0].Err, &asks)
			assert.NoError(t, ends[1].Err)
			require.Len(t, decided, 1)
			assert.Equal(t, tt.decision.Verdict, decided[0].Decision.Verdict)
			assert.NotNil(t, decided[0].Call.Question)
		})
	}
}

func TestElicitationAnswerBreakingTheSchemaIsRefused(t *testing.T) {
	var calls atomic.Int32
	_, client := serve(t, deployScript())
	c := converse.New(client, claude, deployTools(t, deployServer(&calls)), func(o *converse.Options) {
		o.Approver = func(context.Context, converse.Call) (converse.Decision, error) {
			return converse.Call{}.Accept(json.RawMessage(`{"env":"moon"}`)), nil
		}
	})
	_, err := c.Send(context.Background(), "deploy it")
	require.ErrorIs(t, err, converse.ErrDecision)
	require.ErrorIs(t, err, tools.ErrBadAnswer)
	assert.Equal(t, int32(1), calls.Load(), "the bad answer was not sent")
	assert.Len(t, c.State().Pending, 1, "the question stays pending")
}

func TestElicitationPausesAndResumesInAnotherProcess(t *testing.T) {
	var calls atomic.Int32
	server := deployServer(&calls)
	_, client := serve(t, deployScript())
	c := converse.New(client, claude, deployTools(t, server))
	_, err := c.Send(context.Background(), "deploy it")
	var paused *converse.PausedError
	require.ErrorAs(t, err, &paused)
	require.Len(t, paused.Pending, 1)
	assert.Contains(t, err.Error(), `ops__deploy (d1) asks "Deploy where?\x1b[2J"`)
	saved, err := json.MarshalIndent(c.State(), "", "  ")
	require.NoError(t, err)
	// The question's form (testdata/state-v1-question.json; -update
	// writes it again): an optional field of version 1.
	const golden = "testdata/state-v1-question.json"
	if *update {
		require.NoError(t, os.WriteFile(golden, append(saved, '\n'), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(saved))

	// Another process: the state from JSON, a new connection.
	var st converse.State
	require.NoError(t, json.Unmarshal(saved, &st))
	require.Len(t, st.Pending, 1)
	require.NotNil(t, st.Pending[0].Question)
	assert.Equal(t, deployQuestion, st.Pending[0].Question.Message)
	srv2, client2 := serve(t, bedrocktest.Script(bedrocktest.Text("done")))
	r, err := converse.Restore(client2, deployTools(t, server), &st)
	require.NoError(t, err)
	for _, bad := range [][]converse.Decision{
		{converse.Call{ID: "d1"}.Approve()},
		{converse.Call{ID: "d1"}.Accept(json.RawMessage(`{"env":"moon"}`))},
		{converse.Call{ID: "d1"}.Accept(json.RawMessage(`"staging"`))},
	} {
		_, err = r.Resume(context.Background(), bad...)
		require.ErrorIs(t, err, converse.ErrDecision, "%v", bad)
	}
	assert.Equal(t, int32(1), calls.Load(), "no bad answer was sent")
	res, err := r.Resume(context.Background(), converse.Call{ID: "d1"}.Accept(json.RawMessage(`{"env":"production"}`)))
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
	assert.Contains(t, string(srv2.Requests()[0].Body), "deployed to production")
}

// A tool that asks for ever, answered by an Approver that always answers,
// is cut off after maxQuestions, with an error result the model sees.
func TestElicitationQuestionsAreBounded(t *testing.T) {
	var runs atomic.Int32
	pester, err := tools.NewRaw("pester", "Asks.", json.RawMessage(`{"type":"object"}`), func(context.Context, json.RawMessage) (any, error) {
		runs.Add(1)
		return nil, &tools.InputRequiredError{Question: tools.Question{Message: "Again?"}}
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(pester)
	require.NoError(t, err)
	srv, client := serve(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "p1", Name: "pester", Input: map[string]any{}}), bedrocktest.Text("done")))
	c := converse.New(client, claude, reg, func(o *converse.Options) {
		o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
			return call.Accept(json.RawMessage(`{}`)), nil
		}
	})
	res, err := c.Send(context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
	assert.EqualValues(t, 11, runs.Load(), "the first run and ten answered")
	assert.Contains(t, string(srv.Requests()[1].Body), "the tool asked the user more than 10 questions in this call")
}
