package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/quota"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/tools"
)

const claude = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

type cityIn struct {
	City string `json:"city"`
}

// ledger counts the runs of each call, by tools.CallID.
type ledger struct {
	mu   sync.Mutex
	runs map[string]int
}

func (l *ledger) add(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs == nil {
		l.runs = map[string]int{}
	}
	l.runs[id]++
}

func (l *ledger) count() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, v := range l.runs {
		out[k] = v
	}
	return out
}

// weatherRegistry has get_weather, which fails for Atlantis, and
// send_email, which needs approval.
func weatherRegistry(t testing.TB, l *ledger) *tools.Registry {
	t.Helper()
	weather, err := tools.New("get_weather", "The weather in a city.", func(ctx context.Context, in cityIn) (string, error) {
		l.add(tools.CallID(ctx))
		if in.City == "Atlantis" {
			return "", errors.New("no such city")
		}
		return "sunny in " + in.City, nil
	})
	require.NoError(t, err)
	email, err := tools.New("send_email", "Send an email.", func(ctx context.Context, in struct {
		To string `json:"to"`
	}) (string, error) {
		l.add(tools.CallID(ctx))
		return "sent to " + in.To, nil
	}, func(o *tools.Options) { o.RequireApproval = true })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(weather, email)
	require.NoError(t, err)
	return reg
}

func weather(id, city string) bedrocktest.Call {
	return bedrocktest.Call{ID: id, Name: "get_weather", Input: map[string]any{"city": city}}
}

// testEnv is a time-skipping test environment running an agent on srv.
func testEnv(t *testing.T, srv *bedrocktest.Server, reg *tools.Registry, optFns ...func(*ctemporal.Options)) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	return clientEnv(t, srv.Client(), reg, optFns...)
}

// clientEnv is testEnv with an agent calling the model through client.
func clientEnv(t *testing.T, client converse.Client, reg *tools.Registry, optFns ...func(*ctemporal.Options)) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))))
	env := s.NewTestWorkflowEnvironment()
	ctemporal.New(client, reg, optFns...).Register(env)
	return env
}

func result(t *testing.T, env *testsuite.TestWorkflowEnvironment) *ctemporal.Result {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res ctemporal.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	return &res
}

func TestWorkflowRunsTheConversation(t *testing.T) {
	var l ledger
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("Looking.", weather("t1", "Paris"), weather("t2", "Atlantis"), weather("t3", "Oslo")),
		bedrocktest.Text("Paris and Oslo are sunny; Atlantis is not a city."),
	))
	defer srv.Close()
	env := testEnv(t, srv, weatherRegistry(t, &l))
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Weather in Paris, Atlantis and Oslo?"})
	res := result(t, env)
	assert.Equal(t, "Paris and Oslo are sunny; Atlantis is not a city.", res.Text)
	assert.Equal(t, types.StopReasonEndTurn, res.StopReason)
	assert.Equal(t, 2, res.Turns)
	assert.Positive(t, res.Usage.TotalTokens)
	assert.Equal(t, map[string]int{"t1": 1, "t2": 1, "t3": 1}, l.count(), "each call ran once, keyed by its toolUseId")

	// The failing tool is an error result the model saw, not a failure.
	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	results := reqs[1].Messages[2].Content
	require.Len(t, results, 3)
	failed := results[1].(*types.ContentBlockMemberToolResult).Value
	assert.Equal(t, types.ToolResultStatusError, failed.Status)
	assert.Contains(t, failed.Content[0].(*types.ToolResultContentBlockMemberText).Value, "no such city")
	assert.Len(t, res.State.Messages, 4)
}

func TestWorkflowRetriesThrottling(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Throttle(3, bedrocktest.Script(bedrocktest.Text("Hello!"))))
	defer srv.Close()
	env := testEnv(t, srv, nil)
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Hi"})
	assert.Equal(t, "Hello!", result(t, env).Text)
	// One request per activity attempt: the SDK's own retries are off.
	assert.Len(t, srv.Requests(), 4)
}

// TestWorkflowModelCallsUseTheLimiter: the model activities go through the
// agent's quota.Limiter, which sees each throttled attempt and makes
// the call again, within the activity.
func TestWorkflowModelCallsUseTheLimiter(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Throttle(2, bedrocktest.Script(bedrocktest.Text("Hello!"))))
	defer srv.Close()
	lim := quota.NewLimiter(1000, 0)
	env := clientEnv(t, lim.Client(srv.Client()), nil)
	// A throttle pauses the Limiter for about a twentieth of its minute,
	// in real time: past the test suite's default timeout.
	env.SetTestTimeout(time.Minute)
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Hi"})
	assert.Equal(t, "Hello!", result(t, env).Text)
	assert.Len(t, srv.Requests(), 3)
	assert.Equal(t, 2, lim.Throttles(), "each throttled attempt is counted")
}

// TestWorkflowDoesNotRetryValidation: the failure's type is the outcome,
// and its details the State and Bedrock's error code.
func TestWorkflowDoesNotRetryValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *bedrocktest.Error
		code string
	}{
		{"validation", bedrocktest.Validation("The model is not supported."), "ValidationException"},
		{"access denied", bedrocktest.AccessDenied("No access to the model."), "AccessDeniedException"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := bedrocktest.NewServer(bedrocktest.Fail(100, tc.err, bedrocktest.Script()))
			defer srv.Close()
			env := testEnv(t, srv, nil)
			env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Hi"})
			require.True(t, env.IsWorkflowCompleted())
			err := env.GetWorkflowError()
			var app *temporal.ApplicationError
			require.ErrorAs(t, err, &app)
			assert.Equal(t, "converse.caller", app.Type())
			assert.True(t, app.NonRetryable())
			assert.Contains(t, app.Error(), tc.err.Message)
			var st converse.State
			var code string
			require.NoError(t, app.Details(&st, &code), "the failure carries the state to resume from")
			assert.Len(t, st.Messages, 1)
			assert.Equal(t, tc.code, code)
			assert.Len(t, srv.Requests(), 1, "not retried")
		})
	}
}

// TestWorkflowTurnLimit: a run that reaches the turn limit fails the
// workflow with the type "converse.limit", not retryable, with the State to
// go on from.
func TestWorkflowTurnLimit(t *testing.T) {
	var l ledger
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", weather("w1", "Paris")),
		bedrocktest.ToolUse("", weather("w2", "Lyon")),
	))
	defer srv.Close()
	env := testEnv(t, srv, weatherRegistry(t, &l), func(o *ctemporal.Options) {
		o.Conversation = func(o *converse.Options) { o.MaxTurns = 2 }
	})
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Weather in Paris, then Lyon?"})
	require.True(t, env.IsWorkflowCompleted())
	var app *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &app)
	assert.Equal(t, "converse.limit", app.Type())
	assert.True(t, app.NonRetryable())
	var st converse.State
	var code string
	require.NoError(t, app.Details(&st, &code))
	assert.Len(t, st.Messages, 3, "the prompt and the first tool exchange")
	assert.Empty(t, code, "no Bedrock error")
}

func TestWorkflowApprovalAfterADay(t *testing.T) {
	var l ledger
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", weather("w1", "Paris"), bedrocktest.Call{ID: "e1", Name: "send_email", Input: map[string]any{"to": "ops@example.com"}}),
		bedrocktest.Text("Done."),
	))
	defer srv.Close()
	env := testEnv(t, srv, weatherRegistry(t, &l))
	var before ctemporal.Status
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(ctemporal.StatusQueryName)
		require.NoError(t, err)
		require.NoError(t, v.Get(&before))
		env.SignalWorkflow(ctemporal.DecideSignalName, []converse.Decision{converse.Call{ID: "e1"}.Approve()})
	}, 24*time.Hour)
	start := env.Now()
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Weather in Paris, then mail ops."})
	res := result(t, env)
	assert.Equal(t, "Done.", res.Text)
	assert.GreaterOrEqual(t, env.Now().Sub(start), 24*time.Hour, "the workflow waited a (simulated) day")
	assert.Equal(t, 1, before.Turn)
	require.Len(t, before.Pending, 1)
	assert.Equal(t, "e1", before.Pending[0].ID)
	assert.Positive(t, before.Usage.TotalTokens)
	assert.Equal(t, map[string]int{"w1": 1, "e1": 1}, l.count(), "the call needing no approval ran before the decision, once")
}

func TestWorkflowDenial(t *testing.T) {
	var l ledger
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "e1", Name: "send_email", Input: map[string]any{"to": "ops@example.com"}}),
		bedrocktest.Text("I did not send it."),
	))
	defer srv.Close()
	env := testEnv(t, srv, weatherRegistry(t, &l))
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(ctemporal.DecideSignalName, []converse.Decision{converse.Call{ID: "nope"}.Approve()})
		env.SignalWorkflow(ctemporal.DecideSignalName, []converse.Decision{converse.Call{ID: "e1"}.Deny("the user", "not now")})
	}, time.Hour)
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Mail ops."})
	assert.Equal(t, "I did not send it.", result(t, env).Text)
	assert.Empty(t, l.count())
	sent := srv.Requests()[1].Messages[2].Content[0].(*types.ContentBlockMemberToolResult).Value
	assert.Contains(t, sent.Content[0].(*types.ToolResultContentBlockMemberText).Value, "denied by the user: not now")
}

// TestWorkflowContinuesAsNew runs a conversation of four tool rounds with
// one turn a run: each run ends in continue-as-new with the state, and the
// next, started from it, goes on until the answer.
func TestWorkflowContinuesAsNew(t *testing.T) {
	script := func() bedrocktest.Handler {
		return bedrocktest.Script(
			bedrocktest.ToolUse("", weather("a", "Paris")),
			bedrocktest.ToolUse("", weather("b", "Oslo")),
			bedrocktest.ToolUse("", weather("c", "Rome")),
			bedrocktest.Text("All sunny."),
		)
	}
	prompt := "Weather in Paris, Oslo and Rome, one by one."
	sendSrv := bedrocktest.NewServer(script())
	defer sendSrv.Close()
	want, err := converse.New(sendSrv.Client(), claude, weatherRegistry(t, &ledger{})).Send(context.Background(), prompt)
	require.NoError(t, err)

	var l ledger
	srv := bedrocktest.NewServer(script())
	defer srv.Close()
	reg := weatherRegistry(t, &l)
	in := ctemporal.Input{ModelID: claude, Prompt: prompt}
	var runs int
	for {
		runs++
		require.Less(t, runs, 10)
		env := testEnv(t, srv, reg, func(o *ctemporal.Options) { o.TurnsPerRun = 1 })
		env.ExecuteWorkflow(ctemporal.WorkflowName, in)
		require.True(t, env.IsWorkflowCompleted())
		var can *workflow.ContinueAsNewError
		if err := env.GetWorkflowError(); errors.As(err, &can) {
			assert.Equal(t, ctemporal.WorkflowName, can.WorkflowType.Name)
			in = ctemporal.Input{}
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
			continue
		}
		res := result(t, env)
		assert.Equal(t, "All sunny.", res.Text)
		assert.Equal(t, 4, res.Turns, "turns summed over the runs")
		assert.Positive(t, res.Usage.TotalTokens)
		assert.Equal(t, want.Usage, res.Usage, "usage summed over the runs, as Send's")
		require.NotNil(t, want.CostUSD)
		require.NotNil(t, res.CostUSD, "the cost carried over the runs")
		assert.InDelta(t, *want.CostUSD, *res.CostUSD, 1e-12, "cost summed over the runs, as Send's")
		break
	}
	assert.Equal(t, 4, runs)
	assert.Equal(t, map[string]int{"a": 1, "b": 1, "c": 1}, l.count())
}

// TestWorkflowSendsWhatSendSends compares the requests of a workflow with
// those of Send on the same script: parallel calls, a failing tool, an
// approval, a system prompt and prompt caching.
func TestWorkflowSendsWhatSendSends(t *testing.T) {
	script := func() bedrocktest.Handler {
		return bedrocktest.Script(
			bedrocktest.ToolUse("Checking.", weather("t1", "Paris"), weather("t2", "Atlantis")),
			bedrocktest.ToolUse("", weather("t3", "Oslo"), bedrocktest.Call{ID: "e1", Name: "send_email", Input: map[string]any{"to": "ops@example.com"}}),
			bedrocktest.Text("Sent."),
		)
	}
	opts := func(o *converse.Options) {
		o.Request.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "You are terse. " + strings.Repeat("Be exact. ", 600)}}
		o.Cache = &converse.CachePolicy{}
		o.Tools.Concurrency = 1
	}
	prompt := "Weather in Paris and Atlantis, then Oslo, and mail ops."

	var l1 ledger
	sendSrv := bedrocktest.NewServer(script())
	defer sendSrv.Close()
	c := converse.New(sendSrv.Client(), claude, weatherRegistry(t, &l1), opts, func(o *converse.Options) {
		o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
			return call.Approve(), nil
		}
	})
	want, err := c.Send(context.Background(), prompt)
	require.NoError(t, err)

	var l2 ledger
	wfSrv := bedrocktest.NewServer(script())
	defer wfSrv.Close()
	env := testEnv(t, wfSrv, weatherRegistry(t, &l2), func(o *ctemporal.Options) { o.Conversation = opts })
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(ctemporal.DecideSignalName, []converse.Decision{converse.Call{ID: "e1"}.Approve()})
	}, time.Minute)
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: prompt})
	got := result(t, env)

	assert.Equal(t, want.Text, got.Text)
	assert.Equal(t, want.Usage, got.Usage)
	sent, driven := sendSrv.Requests(), wfSrv.Requests()
	require.Len(t, driven, len(sent))
	for i := range sent {
		assert.JSONEq(t, string(sent[i].Body), string(driven[i].Body), "request %d", i+1)
		assert.Contains(t, string(driven[i].Body), `"cachePoint"`)
	}
	assert.Equal(t, c.History(), got.State.Messages)
	wantState, err := json.Marshal(c.State())
	require.NoError(t, err)
	gotState, err := json.Marshal(got.State)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantState), string(gotState), "the same state, whichever drives")
	assert.Equal(t, l1.count(), l2.count())
}

const nova = "us.amazon.nova-pro-v1:0"

// throttled answers the calls to model with a ThrottlingException, and
// passes the others to h.
func throttled(model string, h bedrocktest.Handler) bedrocktest.Handler {
	return bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		if aws.ToString(req.ModelId) == model {
			return nil, bedrocktest.Throttling()
		}
		return h.ServeConverse(ctx, req)
	})
}

// models are the models of the requests srv received, in order.
func models(srv *bedrocktest.Server) []string {
	var ids []string
	for _, req := range srv.Requests() {
		ids = append(ids, aws.ToString(req.ModelId))
	}
	return ids
}

// sendAndWorkflow runs prompt through Send and through the workflow, each
// on a server of its own answering with handler(), with the conversation
// options opts. It checks that the workflow sent exactly Send's requests,
// models included. Send's client makes each call once, and so does the
// workflow's model activity, so that the two make the same attempts.
func sendAndWorkflow(t *testing.T, handler func() bedrocktest.Handler, opts func(*converse.Options), prompt string) (*converse.Result, *ctemporal.Result, *bedrocktest.Server) {
	t.Helper()
	var l1, l2 ledger
	sendSrv := bedrocktest.NewServer(handler())
	t.Cleanup(sendSrv.Close)
	once := func(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} }
	c := converse.New(sendSrv.Client(once), claude, weatherRegistry(t, &l1), opts)
	want, err := c.Send(context.Background(), prompt)
	require.NoError(t, err)

	wfSrv := bedrocktest.NewServer(handler())
	t.Cleanup(wfSrv.Close)
	env := testEnv(t, wfSrv, weatherRegistry(t, &l2), func(o *ctemporal.Options) {
		o.Conversation = opts
		o.ModelActivity.RetryPolicy = &temporal.RetryPolicy{MaximumAttempts: 1}
	})
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: prompt})
	got := result(t, env)

	assert.Equal(t, want.Text, got.Text)
	assert.Equal(t, want.Model, got.Model)
	assert.Equal(t, models(sendSrv), models(wfSrv))
	sent, driven := sendSrv.Requests(), wfSrv.Requests()
	require.Len(t, driven, len(sent))
	for i := range sent {
		assert.JSONEq(t, string(sent[i].Body), string(driven[i].Body), "request %d", i+1)
	}
	assert.Equal(t, c.History(), got.State.Messages)
	assert.Equal(t, l1.count(), l2.count())
	return want, got, wfSrv
}

// TestWorkflowFallsBackAsSendDoes: with Claude always throttled, the workflow
// falls back to Options.ModelCalls.Fallback as Send does, the next turn
// keeping to the fallback (by the workflow's clock), and sends Send's
// requests.
func TestWorkflowFallsBackAsSendDoes(t *testing.T) {
	handler := func() bedrocktest.Handler {
		return throttled(claude, bedrocktest.Script(
			bedrocktest.ToolUse("", weather("t1", "Paris")),
			bedrocktest.Text("Sunny in Paris."),
		))
	}
	opts := func(o *converse.Options) { o.ModelCalls = &converse.CallPolicy{Fallback: []string{nova}} }
	_, got, srv := sendAndWorkflow(t, handler, opts, "Weather in Paris?")
	assert.Equal(t, "Sunny in Paris.", got.Text)
	assert.Equal(t, nova, got.Model, "the fallback model answered")
	assert.Equal(t, []string{claude, nova, nova}, models(srv), "the next turn keeps to the fallback that answered")
}

// TestWorkflowFallsBackAfterTheRetries: under the default retry policy, a
// throttled model call falls back once the activity's attempts are spent,
// as Send falls back after the SDK's retries.
func TestWorkflowFallsBackAfterTheRetries(t *testing.T) {
	srv := bedrocktest.NewServer(throttled(claude, bedrocktest.Script(bedrocktest.Text("Hello!"))))
	defer srv.Close()
	env := testEnv(t, srv, nil, func(o *ctemporal.Options) {
		o.Conversation = func(o *converse.Options) { o.ModelCalls = &converse.CallPolicy{Fallback: []string{nova}} }
	})
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Hi"})
	res := result(t, env)
	assert.Equal(t, "Hello!", res.Text)
	assert.Equal(t, nova, res.Model)
	want := append(slices.Repeat([]string{claude}, 10), nova) // the default policy's 10 attempts
	assert.Equal(t, want, models(srv))
}

// TestWorkflowPrepareTurnModel: a model PrepareTurn chooses is the model
// the workflow calls, as in Send.
func TestWorkflowPrepareTurnModel(t *testing.T) {
	handler := func() bedrocktest.Handler {
		return bedrocktest.Script(
			bedrocktest.ToolUse("", weather("t1", "Paris")),
			bedrocktest.Text("Sunny in Paris."),
		)
	}
	opts := func(o *converse.Options) {
		o.PrepareTurn = func(_ context.Context, t *converse.TurnPlan) error {
			if len(t.Answered) > 0 { // the turn after the tools: a cheaper model
				t.ModelID = nova
			}
			return nil
		}
	}
	_, got, srv := sendAndWorkflow(t, handler, opts, "Weather in Paris?")
	assert.Equal(t, nova, got.Model)
	assert.Equal(t, []string{claude, nova}, models(srv))
}

// pausedState is the State of a conversation with claude paused on a
// send_email call awaiting its decision, after a get_weather call ran.
func pausedState(t *testing.T, l *ledger) *converse.State {
	t.Helper()
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", weather("w1", "Paris"), bedrocktest.Call{ID: "e1", Name: "send_email", Input: map[string]any{"to": "ops@example.com"}}),
	))
	defer srv.Close()
	c := converse.New(srv.Client(), claude, weatherRegistry(t, l))
	_, err := c.Send(context.Background(), "Weather in Paris, then mail ops.")
	require.ErrorIs(t, err, converse.ErrPaused)
	st := c.State()
	require.Len(t, st.Pending, 1)
	return st
}

// TestWorkflowResumesWithTheStatesModel: an Input with a State and no
// ModelID resumes the conversation with the State's model.
func TestWorkflowResumesWithTheStatesModel(t *testing.T) {
	var l ledger
	st := pausedState(t, &l)
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Mailed.")))
	defer srv.Close()
	env := testEnv(t, srv, weatherRegistry(t, &l))
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{State: st, Decisions: []converse.Decision{converse.Call{ID: "e1"}.Approve()}})
	res := result(t, env)
	assert.Equal(t, "Mailed.", res.Text)
	assert.Equal(t, claude, res.Model)
	assert.Equal(t, claude, res.State.ModelID)
	assert.Equal(t, []string{claude}, models(srv))
	assert.Equal(t, map[string]int{"w1": 1, "e1": 1}, l.count())
	// The result has the status field, as Claude's results do.
	sent := srv.Requests()[0].Messages[2].Content[1].(*types.ContentBlockMemberToolResult).Value
	assert.Equal(t, types.ToolResultStatusSuccess, sent.Status)
}

// TestWorkflowRejectsAnInputWithoutAModel: a prompt with no ModelID and
// no State to take it from fails the workflow at once, before any
// activity.
func TestWorkflowRejectsAnInputWithoutAModel(t *testing.T) {
	var l ledger
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hi.")))
	defer srv.Close()
	env := testEnv(t, srv, weatherRegistry(t, &l))
	var activities int
	env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) { activities++ })
	env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{Prompt: "Hi"})
	require.True(t, env.IsWorkflowCompleted())
	var app *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &app)
	assert.True(t, app.NonRetryable())
	assert.Equal(t, "converse.caller", app.Type())
	assert.Contains(t, app.Error(), "no ModelID")
	assert.Zero(t, activities)
	assert.Empty(t, srv.Requests())
}

// TestWorkflowPayloadLimit: a tool result over Options.PayloadLimit is an
// error result, from a tool run once; with NoPayloadLimit it goes through.
func TestWorkflowPayloadLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		want  string // the start of the result the model reads
	}{
		{"over", 4 << 10, "Error: the tool result is "},
		{"off", ctemporal.NoPayloadLimit, `"xxxx`}, // the string, in JSON
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l ledger
			big, err := tools.New("big", "8 KiB of x.", func(ctx context.Context, _ struct{}) (string, error) {
				l.add(tools.CallID(ctx))
				return strings.Repeat("x", 8<<10), nil
			})
			require.NoError(t, err)
			reg, err := tools.NewRegistry(big)
			require.NoError(t, err)
			srv := bedrocktest.NewServer(bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "b1", Name: "big", Input: map[string]any{}}),
				bedrocktest.Text("Seen."),
			))
			defer srv.Close()
			env := testEnv(t, srv, reg, func(o *ctemporal.Options) { o.PayloadLimit = tc.limit })
			env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "Fetch it."})
			assert.Equal(t, "Seen.", result(t, env).Text)
			assert.Equal(t, map[string]int{"b1": 1}, l.count())
			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			got := reqs[1].Messages[2].Content[0].(*types.ContentBlockMemberToolResult).Value
			text := got.Content[0].(*types.ToolResultContentBlockMemberText).Value
			assert.True(t, strings.HasPrefix(text, tc.want), "%.80s", text)
		})
	}
}
