package temporal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/wirejson"
	"github.com/tooluse/bedrock/tools"
)

// Workflow runs a conversation, registered as WorkflowName: the prompt of
// in (or the resumption of its State) to the model's final answer. It
// drives the conversation's step API. Each model call is a
// ModelActivityName activity, and each token count (with
// converse.ContextPolicy.CountTokens) a CountActivityName activity. Each tool call is a ToolActivityName
// activity whose ID is made of the turn and the call's toolUseId. The
// calls of a turn run in parallel up to the conversation's
// Tools.Concurrency. A call that needs approval waits, for as long as it
// takes, for its Decision in a DecideSignalName signal. So does a call
// whose tool asked the user a question, for the answer (converse.Call.Accept,
// Decline or Dismiss), and then runs again with it. The signal holds a
// []converse.Decision; several signals may decide the pending calls one by
// one. StatusQueryName answers a Status. After Options.TurnsPerRun model
// calls, or when Temporal suggests it, the run continues as new from the
// conversation's State, before a model call. A call of an agent of
// Options.Agents runs as a child workflow of this one (see the package
// doc, Agents as child workflows).
//
// The model activity sends the step's ModelCall as it is, model included.
// The model may be one Options.PrepareTurn chose, or one of
// Options.ModelCalls.Fallback. The conversation turns to a fallback, as
// Send does, when a call fails with throttling, a model not ready or timed
// out, or the service unavailable. A throttled call falls back only once
// the activity's retries are spent, as Send's does after the SDK's.
//
// Some Inputs fail the workflow at once, before any activity: one with
// neither a ModelID nor a State to take it from, or with neither a prompt
// nor a State. The error is a non-retryable ApplicationError of type
// "converse.caller".
// A run may end otherwise than with an answer: a Bedrock error not retried
// or retried in vain, the turn limit, a budget. It then fails the workflow
// with a non-retryable ApplicationError. Its type is "converse." and the
// converse.Outcome of its error, such as "converse.limit" (see package
// converse's doc, Outcomes). Its details are the conversation's State, to
// resume from, and Bedrock's error code, if it is Bedrock's error. A model
// request over Options.PayloadLimit fails it with a non-retryable
// ApplicationError of type PayloadTooLargeType instead, before the call.
// A workflow cancelled (or whose parent was) ends cancelled, with the
// conversation's State in its CanceledError's details; it cancels its
// agents' child workflows and waits for them to end.
func (a *Agent) Workflow(ctx workflow.Context, in Input) (*Result, error) {
	status := Status{Turn: in.Turns, Usage: in.Usage}
	spent := spentBefore(in, &status)
	conv, limit, err := a.workflowConversation(ctx, in)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), errorType(converse.OutcomeCaller), nil)
	}
	modelID := conv.State().ModelID // in's, or its State's
	p := &pauses{children: map[string]string{}, inner: map[string][]converse.Call{}}
	if err := workflow.SetQueryHandler(ctx, StatusQueryName, p.query(&status)); err != nil {
		return nil, err
	}
	perRun := cmp.Or(max(a.opts.TurnsPerRun, 0), DefaultTurnsPerRun)
	bg := context.Background() // the step API does no I/O here: it has no client and no session
	asked := map[string]int{}  // the questions of each call's activity, by its first ID
	step, err := begin(bg, conv, in)
	for err == nil && step.Result == nil {
		p.own = step.Pending
		switch {
		case step.ModelCall != nil:
			req := step.ModelCall
			if !req.Summary && (req.Turn > perRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() && req.Turn > 1) {
				next := Input{ModelID: modelID, State: conv.State(), Turns: in.Turns + req.Turn - 1, Usage: status.Usage, CostUSD: spent.cost, Agent: in.Agent, Budget: in.Budget}
				return nil, workflow.NewContinueAsNewError(ctx, WorkflowName, next)
			}
			status.Turn = in.Turns + req.Turn
			out, callErr := a.callModel(ctx, req, in.Agent)
			if errors.As(callErr, new(*payloadError)) { // a workflow task retried would fail as this one
				return nil, temporal.NewNonRetryableApplicationError(callErr.Error(), PayloadTooLargeType, nil)
			}
			step, err = conv.HandleResponse(bg, req, out, callErr)
		case step.CountTokens != nil:
			step, err = a.countTokens(ctx, conv, step.CountTokens, in.Agent)
		case len(step.Calls) > 0:
			left, leftErr := step.BudgetLeft()
			ran := a.runCalls(ctx, p, round{in.Agent, modelID, status.Turn, limit, left, leftErr}, step.Calls, asked)
			spent.calls(ran)
			step, err = conv.AnswerCalls(bg, ran...)
		default:
			p.report(ctx) // to the parent, if an agent's call started this workflow
			step, err = decide(ctx, conv, step)
			p.own = nil
			p.report(ctx)
		}
		spent.turns(step)
	}
	if ctx.Err() != nil {
		// Cancelled: by its client, or with its parent (an agent's call).
		return nil, temporal.NewCanceledError(conv.State())
	}
	if err != nil {
		return nil, failure(err, conv.State())
	}
	res := step.Result
	return &Result{Text: res.Text, StopReason: res.StopReason, Model: res.Model, Turns: in.Turns + res.Turns, Usage: status.Usage, CostUSD: spent.cost, State: conv.State()}, nil
}

// workflowConversation builds the workflow's conversation, of in.Agent's
// agent if set, and returns it with its Tools.Concurrency. Its steps do no
// I/O: the workflow makes their model calls and token counts and runs their
// calls as activities, and Temporal keeps the state. It has the workflow's
// clock, so a replay decides a Budget's wall time as the run did. It has no
// Approver: the workflow decides by signal, and runs the calls that need no
// decision meanwhile. Its MaxTurns is what the runs before left. Its model
// is in.ModelID, or, if that is empty, in.State's; an input with neither is
// rejected.
func (a *Agent) workflowConversation(ctx workflow.Context, in Input) (*converse.Conversation, int, error) {
	reg, optsOf, err := a.conversationOf(in.Agent)
	if err != nil {
		return nil, 0, err
	}
	var base converse.Options
	optsOf(&base)
	maxTurns := base.MaxTurns
	if maxTurns <= 0 {
		maxTurns = converse.DefaultMaxTurns
	}
	opts := func(o *converse.Options) {
		optsOf(o)
		o.Clock = func() time.Time { return workflow.Now(ctx) }
		o.Approver = nil
		o.MaxTurns = max(maxTurns-in.Turns, 1)
		if in.Budget != nil { // a parent's call's: what its Budget left, over the agent's Limits
			o.Budget = in.Budget
		}
	}
	conv, err := restoreOrNew(in, reg, opts)
	return conv, base.Tools.Concurrency, err
}

// spent is what a workflow's runs spent: the usage its Status shows, and
// what that cost, nil when a part of it is unknown.
type spent struct {
	status *Status
	cost   *float64
}

// spentBefore is what the runs before in spent (see Input.CostUSD), the
// usage in status.
func spentBefore(in Input, status *Status) *spent {
	s := &spent{status: status, cost: in.CostUSD}
	if s.cost == nil && in.Turns == 0 {
		s.cost = new(float64) // the first run: nothing spent
	}
	return s
}

// turns counts the model calls that step reports ended (its TurnEnd
// events), as the conversation counts them.
func (s *spent) turns(step *converse.Step) {
	if step == nil {
		return
	}
	for _, ev := range step.Events {
		if end, ok := ev.(converse.TurnEnd); ok {
			s.add(end.Usage, end.CostUSD)
		}
	}
}

// calls counts what the tools of ran reported (converse.Caller.ReportUsage),
// as the conversation counts it.
func (s *spent) calls(ran []converse.CallResult) {
	for _, r := range ran {
		if r.Usage != (converse.Usage{}) || r.CostUSD != nil {
			s.add(r.Usage, r.CostUSD)
		}
	}
}

// add counts u, which cost usd (nil: unknown).
func (s *spent) add(u converse.Usage, usd *float64) {
	s.status.Usage = s.status.Usage.Add(u)
	if s.cost == nil || usd == nil {
		s.cost = nil
		return
	}
	sum := *s.cost + *usd
	s.cost = &sum
}

// begin starts the run of in on conv: its prompt, or the resumption of its
// State with its decisions.
func begin(ctx context.Context, conv *converse.Conversation, in Input) (*converse.Step, error) {
	if in.Prompt != "" {
		return conv.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: in.Prompt}}})
	}
	return conv.BeginResume(ctx, in.Decisions...)
}

// restoreOrNew is in's conversation: its State restored, or a new one.
func restoreOrNew(in Input, reg *tools.Registry, opts func(*converse.Options)) (*converse.Conversation, error) {
	if in.State == nil {
		if in.Prompt == "" {
			return nil, errors.New("temporal: the input has neither a prompt nor a state")
		}
		if in.ModelID == "" {
			return nil, errors.New("temporal: the input has no ModelID, and no State to take the model from")
		}
		return converse.New(nil, in.ModelID, reg, opts), nil
	}
	if in.State.ModelID == "" {
		return nil, errors.New("temporal: the input's State has no ModelID")
	}
	if in.ModelID != "" && in.ModelID != in.State.ModelID {
		return nil, fmt.Errorf("temporal: the input's model %q is not its state's, %q", in.ModelID, in.State.ModelID)
	}
	return converse.Restore(nil, reg, in.State, opts)
}

// callModel makes req's model call as an activity, to the model of the
// request (the turn's, PrepareTurn's or a fallback model), which the body
// leaves out. A request over the payload limit is a *payloadError, and no
// activity is scheduled.
func (a *Agent) callModel(ctx workflow.Context, req *converse.ModelCall, agent string) (*bedrockruntime.ConverseOutput, error) {
	body, err := wirejson.MarshalRequest(req.Input)
	if err != nil {
		return nil, err
	}
	call := ModelCall{ModelID: aws.ToString(req.Input.ModelId), Request: body, Agent: agent}
	if err := a.tooLarge(fmt.Sprintf("model request of turn %d", req.Turn), call); err != nil {
		return nil, err
	}
	ctx = workflow.WithActivityOptions(ctx, a.modelOptions())
	var reply ModelReply
	if err := workflow.ExecuteActivity(ctx, ModelActivityName, call).Get(ctx, &reply); err != nil {
		return nil, bedrockError(err)
	}
	return wirejson.UnmarshalResponse(reply.Response)
}

// countTokens makes req's token count (see converse.ContextPolicy) as a
// CountActivityName activity, with the model activity's options, and hands
// conv its answer. A failed count is logged and handed over too, as Send's
// is: the step then estimates. A request over the payload limit is such a
// failure, and no activity is scheduled.
func (a *Agent) countTokens(ctx workflow.Context, conv *converse.Conversation, req *bedrockruntime.CountTokensInput, agent string) (*converse.Step, error) {
	var out *bedrockruntime.CountTokensOutput
	call, err := countCall(req, agent)
	if err == nil {
		err = a.tooLarge("token count", call)
	}
	if err == nil {
		var tokens int32
		actx := workflow.WithActivityOptions(ctx, a.modelOptions())
		if err = workflow.ExecuteActivity(actx, CountActivityName, call).Get(actx, &tokens); err == nil {
			out = &bedrockruntime.CountTokensOutput{InputTokens: &tokens}
		}
	}
	if err != nil {
		workflow.GetLogger(ctx).Info("temporal: CountTokens failed; estimating", "error", err.Error())
	}
	return conv.HandleCount(context.Background(), req, out, err)
}

// countCall is the count activity's input for req: its Converse request
// in the body, as the model activity's.
func countCall(req *bedrockruntime.CountTokensInput, agent string) (ModelCall, error) {
	in, ok := req.Input.(*types.CountTokensInputMemberConverse)
	if !ok {
		return ModelCall{}, fmt.Errorf("temporal: count tokens: %T is no Converse request", req.Input)
	}
	v := in.Value
	body, err := wirejson.MarshalRequest(&bedrockruntime.ConverseInput{
		ModelId: req.ModelId, Messages: v.Messages, System: v.System, ToolConfig: v.ToolConfig,
		AdditionalModelRequestFields: v.AdditionalModelRequestFields,
	})
	if err != nil {
		return ModelCall{}, fmt.Errorf("temporal: count tokens: %w", err)
	}
	return ModelCall{ModelID: aws.ToString(req.ModelId), Request: body, Agent: agent}, nil
}

// round is what runCalls needs of the conversation: its agent (empty for
// the worker's), its model, whose rules the results follow, the turn, and
// how many calls may run at once (0 means 8, as
// converse.ToolOptions.Concurrency).
type round struct {
	agent, modelID string
	turn, limit    int
	left           *converse.Budget // what the Budget leaves the calls (converse.Step.BudgetLeft)
	leftErr        error            // a limit with nothing left
}

// runCalls runs the calls of a step as activities, at most c.limit at
// once, and returns what came of them in order. The results follow the
// rules of c.modelID, as the Executor of Send's: the request re-encodes
// them for another model it calls. A call whose activity failed for good
// is answered with an error result. A call of an agent of Options.Agents
// runs as a child workflow, whose pauses p passes up and whose decisions
// p passes down. asked counts the questions of each call, by its
// activity's first ID: a call run again with an answer needs an ID of its
// own.
func (a *Agent) runCalls(ctx workflow.Context, p *pauses, c round, batch []converse.Call, asked map[string]int) []converse.CallResult {
	limit := c.limit
	if limit <= 0 {
		limit = 8
	}
	results := make([]converse.CallResult, len(batch))
	sem := workflow.NewSemaphore(ctx, int64(limit))
	wg := workflow.NewWaitGroup(ctx)
	for i, call := range batch {
		wg.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer wg.Done()
			if err := sem.Acquire(ctx, 1); err != nil {
				results[i] = failedResult(call, err)
				return
			}
			defer sem.Release(1)
			if def, ok := a.agents[call.Tool]; ok {
				results[i] = a.runAgent(ctx, p, def, c, call)
				return
			}
			results[i] = a.runTool(ctx, c, call, asked)
		})
	}
	p.waitCalls(ctx, wg)
	return results
}

// runTool runs call as a tool activity (see runCalls).
func (a *Agent) runTool(ctx workflow.Context, c round, call converse.Call, asked map[string]int) converse.CallResult {
	ao, timeout := a.toolOptions(call.Tool)
	id := fmt.Sprintf("tool/%d/%s", c.turn, call.ID)
	ao.ActivityID = id
	if n := asked[id]; n > 0 {
		ao.ActivityID = fmt.Sprintf("%s/%d", id, n+1)
	}
	actx := workflow.WithActivityOptions(ctx, ao)
	var reply ToolReply
	var ran converse.CallResult
	err := workflow.ExecuteActivity(actx, ToolActivityName, ToolCall{ModelID: c.modelID, Call: call, Timeout: timeout, Agent: c.agent}).Get(actx, &reply)
	if err == nil {
		ran, err = resultOf(call, &reply)
	}
	if err != nil {
		return failedResult(call, err)
	}
	if ran.Question != nil {
		asked[id]++
	}
	return ran
}

// decide waits for the decisions on the pending calls of step, approvals
// and answers alike, and takes them. A set that Decide refuses (an answer
// that breaks its question's schema, say) changed nothing: it is logged
// and dropped, and the calls wait for new decisions.
func decide(ctx workflow.Context, conv *converse.Conversation, step *converse.Step) (*converse.Step, error) {
	for {
		decisions, err := awaitDecisions(ctx, step.Pending)
		if err != nil {
			return nil, err
		}
		next, err := conv.Decide(context.Background(), decisions...)
		if !errors.Is(err, converse.ErrDecision) {
			return next, err
		}
		workflow.GetLogger(ctx).Warn("temporal: decisions that do not fit the pending calls are dropped", "error", err.Error())
	}
}

// awaitDecisions waits for a decision on each pending call, from one or
// more signals; a decision on another call is logged and ignored. It
// returns the context's error once the workflow is cancelled.
func awaitDecisions(ctx workflow.Context, pending []converse.Call) ([]converse.Decision, error) {
	ch := workflow.GetSignalChannel(ctx, DecideSignalName)
	byID := map[string]converse.Decision{}
	for len(byID) < len(pending) {
		var ds []converse.Decision
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(ch, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &ds) })
		sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		if err := ctx.Err(); err != nil { // the workflow, or its parent, was cancelled
			return nil, err
		}
		for _, d := range ds {
			if !isPending(pending, d.ID) {
				workflow.GetLogger(ctx).Warn("temporal: a decision on a call that is not pending is ignored", "toolUseId", d.ID)
				continue
			}
			byID[d.ID] = d
		}
	}
	out := make([]converse.Decision, len(pending))
	for i, c := range pending {
		out[i] = byID[c.ID]
	}
	return out, nil
}

func isPending(pending []converse.Call, id string) bool {
	for _, c := range pending {
		if c.ID == id {
			return true
		}
	}
	return false
}

// failure is the workflow's error for err, with st to resume from. It is
// never retryable, whatever its outcome: a retry of the workflow would
// start again from its Input, and run its tools again.
func failure(err error, st *converse.State) error {
	var code string
	var api smithy.APIError
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), errorType(converse.Classify(err)), nil, st, code)
}

// errorType is the type of a workflow's failure of outcome o.
func errorType(o converse.Outcome) string { return "converse." + string(o) }
