// Package converse executes Amazon Bedrock Converse tool calls and drives a
// whole tool-use conversation.
//
// A Converse response holds text and zero or more toolUse blocks. An
// [Executor] answers every toolUse with exactly one toolResult (same
// toolUseId, the tool's output as JSON text, status success or error), running
// the calls of a turn concurrently, each on a goroutine of its own so that a
// call that hangs can be abandoned at its timeout; the calls of quick tools
// made with tools.WithInline run on the executor's goroutine instead, which
// saves a goroutine handoff per call. A [Conversation] sends the history with
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
// adjust. Go errors are for the caller: Bedrock API errors (wrapped with the
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
