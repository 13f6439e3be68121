package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

// agents are a coordinator's servers and agents: the coordinator delegates
// to top, which (at two levels) delegates to mailer, whose send call needs
// approval. Each server is a fresh script.
type agents struct {
	outer, boss, mailer *bedrocktest.Server
	defs                []agenttool.Agent // the agents, the top one first
	reg                 *tools.Registry   // the coordinator's
	sends               atomic.Int32
}

func newAgents(t *testing.T, levels int) *agents {
	t.Helper()
	g := &agents{}
	serve := func(replies ...*bedrocktest.Reply) *bedrocktest.Server {
		srv := bedrocktest.NewServer(bedrocktest.Script(replies...))
		t.Cleanup(srv.Close)
		return srv
	}
	delegate := func(id, name string) *bedrocktest.Reply {
		return bedrocktest.ToolUse("", bedrocktest.Call{ID: id, Name: name, Input: map[string]any{"task": "mail ops"}})
	}
	send, err := tools.New("send", "Sends mail.", func(context.Context, struct{}) (string, error) {
		g.sends.Add(1)
		return "sent", nil
	}, func(o *tools.Options) { o.RequireApproval = true })
	require.NoError(t, err)
	g.outer = serve(delegate("o1", "top"), bedrocktest.Text("Done."))
	g.mailer = serve(bedrocktest.ToolUse("", bedrocktest.Call{ID: "i1", Name: "send", Input: map[string]any{}}), bedrocktest.Text("Mailed."))
	mailer := agenttool.Agent{Name: "mailer", Description: "Mails.", Client: g.mailer.Client(), Model: claude, System: "You mail.", Tools: registry(t, send)}
	if levels == 1 {
		mailer.Name = "top"
		g.defs = []agenttool.Agent{mailer}
	} else {
		g.boss = serve(delegate("b1", "mailer"), bedrocktest.Text("Delegated."))
		top := agenttool.Agent{Name: "top", Description: "Delegates.", Client: g.boss.Client(), Model: claude, Tools: registry(t, tool(t, mailer))}
		g.defs = []agenttool.Agent{top, mailer}
	}
	g.reg = registry(t, tool(t, g.defs[0]))
	return g
}

func tool(t *testing.T, a agenttool.Agent) *tools.Tool {
	t.Helper()
	tl, err := agenttool.New(a)
	require.NoError(t, err)
	return tl
}

func registry(t *testing.T, ts ...*tools.Tool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	return reg
}

// TestWorkflowAgentApproval: an agent's call, at one or two levels down,
// runs as a child workflow. A call of its that needs approval pauses the
// coordinator: Status lists it by its path, and a Decide signal on the
// path continues the agents, then the coordinator. Nothing runs twice, and
// the usage is that of a Send of the same conversation.
func TestWorkflowAgentApproval(t *testing.T) {
	for _, levels := range []int{1, 2} {
		t.Run(map[int]string{1: "agent", 2: "agentagent"}[levels], func(t *testing.T) {
			path := map[int]string{1: "o1/i1", 2: "o1/b1/i1"}[levels]
			sendRun := newAgents(t, levels)
			want, err := converse.New(sendRun.outer.Client(), claude, sendRun.reg, func(o *converse.Options) {
				o.Approver = func(context.Context, converse.Call) (converse.Decision, error) { return converse.Call{}.Approve(), nil }
			}).Send(context.Background(), "Mail ops.")
			require.NoError(t, err)

			g := newAgents(t, levels)
			env := testEnv(t, g.outer, g.reg, func(o *ctemporal.Options) { o.Agents = g.defs })
			var paused ctemporal.Status
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(ctemporal.StatusQueryName)
				require.NoError(t, err)
				require.NoError(t, v.Get(&paused))
				env.SignalWorkflow(ctemporal.DecideSignalName, []converse.Decision{converse.Call{ID: "o1/x9"}.Approve(), converse.Call{ID: path}.Approve()})
			}, time.Hour)
			env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Mail ops."})
			res := result(t, env)

			assert.Equal(t, "Done.", res.Text)
			require.Len(t, paused.Pending, 1)
			assert.Equal(t, path, paused.Pending[0].ID)
			assert.Equal(t, "send", paused.Pending[0].Tool)
			assert.Equal(t, int32(1), g.sends.Load(), "send ran once, after its approval")
			assert.Len(t, g.mailer.Requests(), 2, "the mailer's model was called twice")
			assert.Equal(t, want.Usage, res.Usage, "the agents' usage counted, as in Send")
			require.NotNil(t, want.CostUSD)
			require.NotNil(t, res.CostUSD)
			assert.InDelta(t, *want.CostUSD, *res.CostUSD, 1e-12, "and their cost")
			assert.Contains(t, string(g.outer.Requests()[1].Body), map[int]string{1: "Mailed.", 2: "Delegated."}[levels])
			assert.Contains(t, string(g.mailer.Requests()[0].Body), "You mail.", "the agent's system prompt")
		})
	}
}

// TestWorkflowAgentWithinCallerBudget: an agent's child workflow gets what
// the coordinator's Budget left its call, as agenttool's conversation does
// in a Send: its requests are capped alike. With nothing left the agent is
// not started, and the call says so, as in a Send.
func TestWorkflowAgentWithinCallerBudget(t *testing.T) {
	for _, tt := range []struct {
		name    string
		output  int // the coordinator's Send limit of output tokens
		started bool
	}{
		{"room", 1000, true},
		{"spent", 5, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			budget := func(o *converse.Options) { o.Budget = &converse.Budget{Send: converse.Limits{OutputTokens: tt.output}} }
			sendRun := newAgents(t, 1)
			_, err := converse.New(sendRun.outer.Client(), claude, sendRun.reg, budget, func(o *converse.Options) {
				o.Approver = func(context.Context, converse.Call) (converse.Decision, error) { return converse.Call{}.Approve(), nil }
			}).Send(context.Background(), "Mail ops.")
			var be *converse.BudgetError
			if !errors.As(err, &be) {
				require.NoError(t, err)
			}

			g := newAgents(t, 1)
			env := testEnv(t, g.outer, g.reg, func(o *ctemporal.Options) {
				o.Agents = g.defs
				o.Conversation = budget
			})
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(ctemporal.DecideSignalName, []converse.Decision{converse.Call{ID: "o1/i1"}.Approve()})
			}, time.Hour)
			env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Mail ops."})
			require.True(t, env.IsWorkflowCompleted())

			if !tt.started {
				assert.Empty(t, g.mailer.Requests(), "the agent was not started")
				assert.Empty(t, sendRun.mailer.Requests(), "as in a Send")
				var app *temporal.ApplicationError
				require.ErrorAs(t, env.GetWorkflowError(), &app)
				assert.Equal(t, "converse.limit", app.Type(), "the coordinator's next turn is over the Budget")
				var st converse.State
				var code string
				require.NoError(t, app.Details(&st, &code))
				last, err := json.Marshal(st.Messages[len(st.Messages)-1])
				require.NoError(t, err)
				assert.Contains(t, string(last), "top was not started", "the call says why")
				return
			}
			require.NotEmpty(t, g.mailer.Requests())
			got, want := g.mailer.Requests()[0].InferenceConfig, sendRun.mailer.Requests()[0].InferenceConfig
			require.NotNil(t, want)
			require.NotNil(t, got)
			assert.Equal(t, *want.MaxTokens, *got.MaxTokens, "capped to what the caller's Budget left, as in a Send")
			assert.Equal(t, int32(995), *got.MaxTokens)
		})
	}
}
