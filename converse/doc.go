// Package converse executes Amazon Bedrock Converse tool calls and drives a
// whole tool-use conversation.
//
// A Converse response holds text and zero or more toolUse blocks. An
// [Executor] answers every toolUse with exactly one toolResult (same
// toolUseId, the tool's output as JSON text, status success or error), running
// the calls of a turn concurrently, each on a goroutine of its own so that a
// call that hangs can be abandoned at its timeout. A [Conversation] sends the history with
// the tool configuration, appends the assistant message, runs the requested
// tools, sends all results back in one user message, and calls the model
// again until it stops asking for tools:
//
//	cfg, _ := config.LoadDefaultConfig(ctx)
//	client := bedrockruntime.NewFromConfig(cfg)
//	reg, _ := tools.NewRegistry(tools.Builtins()...)
//	res, err := converse.Run(ctx, client, "us.anthropic.claude-sonnet-4-20250514-v1:0", reg,
//		"What time is it?")
//
// # Failures
//
// A tool that fails, panics, hangs past its timeout, is unknown, or gets
// input that is not an object or breaks its schema is answered with an error
// result for that call only; the conversation goes on and the model can
// adjust. Everything a tool returns is untrusted: a panic of its error's
// Error method or of its output's MarshalJSON is recovered like a panic of
// the tool, and a tool that returns after its deadline is answered as timed
// out, whatever it returned.
//
// # Configuration
//
// The package follows the AWS SDK's convention, which its users meet beside
// it: a value made by a constructor takes functions that set an exported
// Options struct (New, as bedrockruntime.NewFromConfig), and a value you
// build and hold is configured by its fields, with a useful zero value (an
// Executor, like an http.Server). The settings of tool execution are one
// struct, [ToolOptions], that an Executor embeds and Options holds as Tools,
// so each setting has one name and one doc comment:
//
//	e := &converse.Executor{Tools: reg, ToolOptions: converse.ToolOptions{Concurrency: 1}}
//	c := converse.New(client, modelID, reg, func(o *converse.Options) { o.Tools.Timeout = 10 * time.Second })
//
// # Limits
//
// [ToolOptions].Concurrency (8 by default) bounds the tool code really
// running. A call answered at its timeout whose tool ignores its
// context is abandoned, not stopped: it keeps its slot until the tool
// returns, across the Sends of a Conversation, and a call that cannot get a
// slot before its own timeout is answered as timed out, naming the calls
// holding the slots. [Executor.Abandoned] counts the abandoned calls still
// running; [ToolEnd].Abandoned and a log line report each one.
//
// The output of a call sent to the model is capped at 1 MiB unless the tool
// (tools.Options.MaxOutput) or [ToolOptions].MaxOutput sets another limit. Longer output, or
// error text, is cut on a rune boundary, ends with a marker such as
// "… [truncated: 104857602 bytes, first 1048576 kept]", and is sent as text,
// as cut JSON is no JSON; [ToolEnd].Truncated reports it.
//
// # History
//
// [Conversation.History] never waits for a model call or a tool: during a
// Send it returns the history before that Send, so it may be called from
// OnEvent (to redraw a transcript on TurnEnd) or from another goroutine. Go errors are for the caller: Bedrock API errors (wrapped with the
// turn number, usable with errors.As against *types.ThrottlingException and
// the rest), cancellation, and the sentinels [ErrMaxTurns], [ErrMaxTokens],
// [ErrMalformedToolUse], [ErrMalformedModelOutput],
// [ErrContextWindowExceeded] and [ErrStreamTruncated].
//
// # Retries
//
// Throttling and 5xx errors are retried by the SDK's retryer, not by this
// package. Configure it on the client:
//
//	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
//		o.Retryer = retry.AddWithMaxAttempts(retry.NewStandard(), 8)
//		// or adaptive rate limiting for sustained throttling:
//		// o.Retryer = retry.NewAdaptiveMode()
//	})
//
// or with AWS_MAX_ATTEMPTS and AWS_RETRY_MODE=adaptive in the environment.
//
// # What Bedrock accepts
//
// The loop keeps to Bedrock's rules: a toolConfig accompanies every request
// whose history holds tool blocks; error results are never empty; tool
// results never share a user message with text (Llama, Mistral and Writer
// reject that); echoed toolUse blocks carry only toolUseId, name and input;
// reasoning blocks are echoed unchanged; the status field is sent only to
// model families documented to accept it (see [StatusMode]).
//
// Offline tests of code built on this package use the bedrocktest
// subpackage, a local Bedrock Runtime that the real SDK client talks to.
package converse
