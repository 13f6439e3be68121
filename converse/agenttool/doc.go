// Package agenttool makes a tool of an agent: a model with a system prompt
// and tools of its own, which another conversation (a coordinator) calls to
// delegate a task to it, as it calls any tool.
//
//	researcher, err := agenttool.New(agenttool.Agent{
//		Name:        "researcher",
//		Description: "Finds facts on the web. Give it the whole question.",
//		Client:      client,
//		Model:       "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
//		System:      "You research facts and cite your sources.",
//		Tools:       webTools,
//	})
//	reg, _ := tools.NewRegistry(researcher)
//	res, err := converse.New(client, coordinatorModel, reg).Send(ctx, prompt)
//
// The tool's input is {"task": "..."}; its output is the agent's final
// answer. [NewStructured] makes one whose input is a typed value and whose
// output is the agent's structured answer. Each call runs a conversation
// of its own (or, with Agent.Keep, continues the one its caller keeps with
// the agent), which the caller's conversation sees through:
//
//   - Usage: the agent's usage and cost join the caller's Result.Usage,
//     Result.CostUSD, State.Usage and Budget (see converse.Caller.ReportUsage).
//   - Budget: the agent's conversation gets what the caller's Budget has
//     left (converse.Caller.Budget), so a limit stops it at its next step
//     boundary; the call is then answered with what the agent had, and
//     that it was stopped.
//   - Traces: the agent's invoke_agent span, named for Agent.Name, is a
//     child of the call's execute_tool span, and its spans go to the
//     caller's tracer provider.
//   - Cancellation: the call's context is the agent's, so cancelling the
//     caller, or the call's timeout, cancels the agent.
//   - Crashes: with a Store (Agent.Store, or the Store of the caller's
//     Options.Session), the agent's conversation is saved at each step
//     under the session "<caller's session ID>.<toolUseId>" (the agent's
//     name without a caller's session). The tool is resumable
//     (tools.Options.Resumable): the caller's Resume after a crash runs a
//     call cut off again, with its toolUseId, as does an engine that
//     retries a Step's call; the call restores the agent's conversation
//     and resumes it from its last step, so its completed calls are not
//     run again. Without a Store, such a call starts the task over.
//
// An agent's own tools may be agents: the nesting goes as deep as the
// registries do, and each level's usage reaches the top.
//
// # Approvals and questions
//
// The agent's calls that need a decision (an approval, or an answer to a
// question its tool asks) pass up to the caller. Each is named by its
// path: the caller's call ID, "/", the agent's call ID ("o1/t2"; an
// agent's agent's, "o1/b1/t2").
//
//   - In process: the agent's Approver, unless Agent.Options sets one, is
//     the caller's (converse.Caller.Approver), asked with the path as the
//     call's ID. The calls of one round ask it one at a time.
//   - Across processes: without an Approver, or when it pauses, the agent
//     pauses, and so does the caller. Its Send or Resume returns a
//     *converse.PausedError listing the agent's pending calls by path, as
//     its State's Pending does. The caller's Resume, with a decision for
//     each path, runs the call again. The call resumes the agent's
//     conversation with those decisions (converse.Caller.Decisions), then
//     the caller's goes on. Nothing the agent had run runs again.
//
// The paused agent is kept in its Store, under the call's session (see
// Crashes above), so that another process can resume it; serve
// (package agentcore) does so between invocations. Without a Store, the
// caller's State carries the paused agent's State (see
// converse.Caller.State): the caller's State, saved as JSON and restored
// in another process, resumes the agent, then the caller. An agent's
// agent's State is inside its caller's, and so on up.
//
// In a Temporal workflow (module converse/temporal), an agent that the
// worker lists in its Options.Agents runs each call as a child workflow,
// with the workflow ID "<parent's ID>/<toolUseId>". The child's steps are
// activities of its own, retried and recorded one by one, so a worker
// that dies mid-agent does not run the agent's completed calls again. A
// pause waits in the child, holding no worker, for days if need be. The
// parent's Status lists the child's pending calls by path, and routes a
// decision signal to the child by the path's first ID. Running the agent's
// steps as activities of the parent instead would interleave two loops in
// one event history. That history would then grow toward Temporal's limit
// with every nested step. An agent not listed there runs in one tool
// activity, as any tool: a pause there is the call's error result.
package agenttool
