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
//     Result.CostUSD, State.Usage and Budget (see converse.ReportUsage).
//   - Budget: the agent's conversation gets what the caller's Budget has
//     left (converse.BudgetLeft), so a limit stops it at its next step
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
package agenttool
