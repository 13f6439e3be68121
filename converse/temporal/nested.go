package temporal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"go.temporal.io/sdk/workflow"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/tools"
)

// NestedSignalName is the signal an agent's child workflow sends its
// parent whenever its calls awaiting a decision change, its own and its
// children's. The parent's Status lists them by path.
const NestedSignalName = "converse.nested"

// nestedPause is the payload of a NestedSignalName signal.
type nestedPause struct {
	WorkflowID string          // the child's
	Pending    []converse.Call // by path below the child
}

// pauses are the calls of a workflow run awaiting a decision: its own, and
// those of the agents' child workflows it waits for, by the agent call's
// toolUseId. It routes their decisions to the children.
type pauses struct {
	own      []converse.Call
	children map[string]string          // the running agent calls' child workflow IDs, by toolUseId
	inner    map[string][]converse.Call // their pending calls, by toolUseId
}

// pending are the calls awaiting a decision: the run's own, then the
// children's, each named by its path, in the order of their toolUseIds.
func (p *pauses) pending() []converse.Call {
	calls := slices.Clone(p.own)
	ids := make([]string, 0, len(p.inner))
	for id := range p.inner {
		ids = append(ids, id)
	}
	slices.Sort(ids) // a map's order would make the replay differ
	for _, id := range ids {
		for _, c := range p.inner[id] {
			c.ID = id + "/" + c.ID
			calls = append(calls, c)
		}
	}
	return calls
}

// query answers the StatusQueryName query: status, with the calls
// awaiting a decision.
func (p *pauses) query(status *Status) func() (Status, error) {
	return func() (Status, error) {
		s := *status
		s.Pending = p.pending()
		return s, nil
	}
}

// report tells the parent workflow, if any, the calls awaiting a decision.
func (p *pauses) report(ctx workflow.Context) {
	info := workflow.GetInfo(ctx)
	parent := info.ParentWorkflowExecution
	if parent == nil {
		return
	}
	msg := nestedPause{WorkflowID: info.WorkflowExecution.ID, Pending: p.pending()}
	if err := workflow.SignalExternalWorkflow(ctx, parent.ID, parent.RunID, NestedSignalName, msg).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("temporal: the parent workflow was not told of the pending calls", "error", err.Error())
	}
}

// childPaused takes a child's signal in.
func (p *pauses) childPaused(ctx workflow.Context, in nestedPause) {
	for id, child := range p.children {
		if child == in.WorkflowID {
			p.inner[id] = in.Pending
			if len(in.Pending) == 0 {
				delete(p.inner, id)
			}
			p.report(ctx)
			return
		}
	}
}

// forward sends each decision to the child whose agent call its path
// starts with, its ID made relative to it.
func (p *pauses) forward(ctx workflow.Context, ds []converse.Decision) {
	batches := map[string][]converse.Decision{}
	var order []string
	for _, d := range ds {
		first, rest, ok := strings.Cut(d.ID, "/")
		if _, running := p.children[first]; !ok || !running {
			workflow.GetLogger(ctx).Warn("temporal: a decision on a call that is not pending is ignored", "toolUseId", d.ID)
			continue
		}
		if batches[first] == nil {
			order = append(order, first)
		}
		d.ID = rest
		batches[first] = append(batches[first], d)
	}
	for _, id := range order {
		if err := workflow.SignalExternalWorkflow(ctx, p.children[id], "", DecideSignalName, batches[id]).Get(ctx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("temporal: decisions not passed to an agent", "toolUseId", id, "error", err.Error())
		}
	}
}

// waitCalls waits until wg is done. Meanwhile it passes the decisions
// that come to the agents' child workflows, and takes their pauses in.
func (p *pauses) waitCalls(ctx workflow.Context, wg workflow.WaitGroup) {
	done, settle := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		wg.Wait(ctx)
		settle.Set(nil, nil)
	})
	decide, nested := workflow.GetSignalChannel(ctx, DecideSignalName), workflow.GetSignalChannel(ctx, NestedSignalName)
	for finished := false; !finished; {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(done, func(workflow.Future) { finished = true })
		sel.AddReceive(decide, func(c workflow.ReceiveChannel, _ bool) {
			var ds []converse.Decision
			c.Receive(ctx, &ds)
			p.forward(ctx, ds)
		})
		sel.AddReceive(nested, func(c workflow.ReceiveChannel, _ bool) {
			var in nestedPause
			c.Receive(ctx, &in)
			p.childPaused(ctx, in)
		})
		sel.Select(ctx)
	}
}

// runAgent runs call, of the agent def, as a child workflow whose ID is
// the run's, "/", the call's toolUseId, and answers it with the agent's
// final text and usage. The child's Budget is what c's step left, as
// agenttool's is in a Send. A child that fails, or that the Budget leaves
// nothing, answers it with an error result.
func (a *Agent) runAgent(ctx workflow.Context, p *pauses, def agenttool.Agent, c round, call converse.Call) converse.CallResult {
	var in agenttool.Input
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return failedResult(call, fmt.Errorf("the agent's input: %w", err))
	}
	if c.leftErr != nil {
		return failedResult(call, fmt.Errorf("%s was not started: %w", def.Name, c.leftErr))
	}
	id := workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + call.ID
	p.children[call.ID] = id
	defer func() {
		delete(p.children, call.ID)
		if _, ok := p.inner[call.ID]; ok {
			delete(p.inner, call.ID)
			p.report(ctx)
		}
	}()
	// Cancelled with its parent, the child ends before its call is answered.
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: id, WaitForCancellation: true})
	var res Result
	err := workflow.ExecuteChildWorkflow(cctx, WorkflowName, Input{ModelID: def.Model, Prompt: in.Task, Agent: def.Name, Budget: def.Budget(c.left)}).Get(cctx, &res)
	if err != nil {
		return failedResult(call, err)
	}
	return converse.CallResult{ID: call.ID, Usage: res.Usage, CostUSD: res.CostUSD, Result: &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: aws.String(call.ID),
		Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: res.Text}},
	}}}
}

// conversationOf is what a conversation of the named agent needs: its
// registry and its options, applied over the worker's. The empty name is
// the worker's own conversation.
func (a *Agent) conversationOf(name string) (*tools.Registry, func(*converse.Options), error) {
	if name == "" {
		return a.reg, func(o *converse.Options) { *o = a.conversationOptions() }, nil
	}
	def, ok := a.agents[name]
	if !ok {
		return nil, nil, fmt.Errorf("temporal: no agent %q in Options.Agents", name)
	}
	return def.Tools, func(o *converse.Options) {
		*o = a.conversationOptions()
		for _, fn := range def.Options {
			fn(o)
		}
		if def.System != "" {
			o.Request.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: def.System}}
		}
		o.Telemetry.AgentName = def.Name
		o.Budget = def.Budget(nil)
	}, nil
}

// clientOf is the client of the named agent's model calls: its own, or
// the worker's.
func (a *Agent) clientOf(name string) converse.Client {
	if def, ok := a.agents[name]; ok && def.Client != nil {
		return def.Client
	}
	return a.client
}
