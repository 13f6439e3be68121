// Package lambdatool makes tools whose calls run on AWS Lambda: each call is
// a synchronous Invoke of a function, with the tool's input as the payload
// and the function's JSON response as the output. Heavy tools (code
// execution, scraping, document processing) and tools that must run in
// another account, VPC or language then scale with Lambda instead of with the
// process that holds the conversation.
//
// [NewRaw] and [New] return [*tools.Tool] values, for a [tools.Registry] like
// any other tool: the converse package runs their calls with its usual
// concurrency bound and timeouts. The input is validated against the tool's
// schema, with defaults filled in, before the function is invoked: an input
// that fails never reaches it. One *lambda.Client, which is safe for
// concurrent use, serves any number of tools; its configuration (region,
// credentials, retries, endpoint) is the caller's, so
// AWS_ENDPOINT_URL_LAMBDA, read by config.LoadDefaultConfig, aims it at a
// local emulator.
//
//	client := lambda.NewFromConfig(cfg)
//	resize, err := lambdatool.NewRaw(client,
//		lambdatool.Function{Name: "arn:aws:lambda:us-east-1:123456789012:function:resize", Qualifier: "live"},
//		"resize_image", "Resizes an image in S3.", schema)
//
// # What the function receives
//
// The payload is the input object. ClientContext.custom carries the rest:
// the client_context of a Python handler, lambdacontext.ClientContext.Custom
// in Go. It holds the call's toolUseId under "toolUseId", set by the
// executor with [tools.WithCallID]. It holds the tool's name under
// "toolName" and, as an AgentCore Gateway sends it, under
// "bedrockAgentCoreToolName". It holds the trace context ("traceparent",
// "tracestate") when the call's context carries an OpenTelemetry span and
// a global propagator is set, or what [Function.TraceContext] adds. The
// whole must fit Lambda's limit of 3,583 bytes.
//
// # Failures
//
// Every failure of a call is an error result for that call, worded for the
// model, and the conversation goes on:
//
//   - The function failed (Lambda's X-Amz-Function-Error header is set): the
//     model reads the errorType and errorMessage of the payload, never its
//     stackTrace, as a [*FunctionError]. Lambda's own timeout of the
//     function is such an error ("Task timed out after ...").
//   - Lambda throttled the invocation (TooManyRequestsException) and the
//     SDK's retries did not get through.
//   - The call's timeout, the executor's, expired, or the conversation was
//     cancelled: the Invoke is cancelled with the call's context. The
//     function itself may still run to its end on Lambda: cancelling an
//     invocation stops the wait, not the function.
//   - The response is not JSON, or is larger than 1 MiB (or the tool's
//     Options.MaxOutput, if larger): an error wrapping
//     [tools.ErrOutputTooLarge]. Lambda limits a response to 6 MB itself.
//   - Access was denied: the model reads only that; what to check (the
//     lambda:InvokeFunction permission, the function's resource policy) goes
//     to [Function.Logger], as do other failures of the Lambda API.
//
// # At least once
//
// The client's retryer sends an Invoke again when an attempt fails on the
// way, including one whose request had reached Lambda. So a function can
// run more than once for one call: Lambda's Invoke reference warns that a
// function may be invoked several times when an error occurs. Make a
// function with side effects idempotent, keyed by the toolUseId it
// receives, or give its client a retryer of one attempt
// (retry.AddWithMaxAttempts(retry.NewStandard(), 1)). On loopback, an
// emulator's, the SDK can close a request body that the HTTP transport is
// still copying, and drop the connection. The retryer answers that by
// invoking again. Sending request bodies with only Read and Close avoids
// it, as recording.PlainBodies does for Bedrock's clients.
//
// # Scope
//
// Calls are synchronous (InvocationType RequestResponse) only. Asynchronous
// invocation (Event) returns before the function has a result, so it has
// no output to give the model. It is out of scope, as are response
// streaming and durable executions.
//
// # Testing with the emulator
//
// This package's tests run a real aws-lambda-go handler in the emulator,
// which make test installs (on Linux; without it they skip). Lambda's own
// answers (the X-Amz-Function-Error header, throttling, access denied) come
// from a stub of its wire protocol.
//
// The AWS Lambda Runtime Interface Emulator (aws-lambda-rie) runs a function
// locally and answers the Invoke API at
// /2015-03-31/functions/function/invocations: invoke the function "function"
// with the client's BaseEndpoint (or AWS_ENDPOINT_URL_LAMBDA) set to it. It
// differs from Lambda in ways a test sees:
//
//   - It runs one invocation at a time.
//   - It answers a function error with status 200, the error object as the
//     payload and no X-Amz-Function-Error header. So the tool passes the
//     error object on as output, where real Lambda's answer is an error
//     result.
//   - It answers a function timeout with the plain text "Task timed out
//     after N.00 seconds", which the tool reports as a response that is
//     not JSON.
//   - It answers a panic, after which the runtime exits, with status 502.
//     The SDK retries it and then reports an unknown error.
package lambdatool
