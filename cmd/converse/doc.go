// Converse holds a whole tool-use conversation with a model on Amazon
// Bedrock from the terminal: it sends the prompt, runs the tools the model
// asks for, sends their results back, and prints the model's answer.
//
// Usage:
//
//	converse [flags] [prompt ...]
//
// The prompt is the arguments joined by spaces. Without arguments it is read
// from standard input; when standard input is a terminal, converse is an
// interactive chat instead: each line is a user message, the conversation's
// history is kept from one message to the next, and Ctrl-D ends it. A
// message that fails is reported and the chat goes on, as if it had not been
// sent.
//
// The model's text goes to standard output as it arrives, turn by turn;
// diagnostics, and with -v a trace, go to standard error.
//
// # Flags
//
//	-model ID         model ID, inference profile or ARN; default $BEDROCK_MODEL_ID,
//	                  else us.anthropic.claude-sonnet-4-5-20250929-v1:0
//	-region REGION    AWS region; default from AWS_REGION or the profile, else us-east-1
//	-profile NAME     profile of the shared config files (~/.aws/config, ~/.aws/credentials)
//	-endpoint URL     custom Bedrock Runtime endpoint: a VPC endpoint, or a local server
//	-system TEXT      system prompt
//	-max-tokens N     most output tokens of each model call; default the model's
//	-temperature X    sampling temperature, 0 to 2 (models accept less); default the model's
//	-max-turns N      most model calls per prompt (default 10)
//	-tools FILE       tool manifest (see below); its tools join the built-ins
//	-no-builtins      leave out the built-in tools get_current_datetime and calculator
//	-stream           use ConverseStream, so text appears as it is generated
//	-record FILE      write the model calls to FILE as a recording
//	-replay FILE      offline: answer the model calls from the recording FILE
//	-replay-lenient   with -replay, serve the recorded answers without comparing requests
//	-json             print one JSON object per prompt (see below), and no text
//	-v                trace each turn and tool call on standard error
//	-h                print the usage
//
// Credentials and region come from -profile and -region, or else from the
// AWS SDK's default chain, as for the AWS CLI: the environment
// (AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_REGION...), the shared config files,
// SSO, and the EC2 or container roles. They are looked for before the first
// model call, so a machine without any fails at once. Throttling and server
// errors are retried by the SDK (AWS_MAX_ATTEMPTS, AWS_RETRY_MODE).
//
// # Exit status
//
// 0 when the model finished. An answer cut off at max_tokens, or stopped by
// a guardrail or content filter, still exits 0, with a warning on standard
// error.
//
// 1 for failures: Bedrock errors, no credentials, the turn limit
// (-max-turns) reached while the model still asks for tools, max_tokens
// reached in the middle of a tool call, a broken stream, an interruption.
// Each is one line on standard error, with a hint where one helps: how to
// configure credentials, that model access must be enabled for the model in
// the region (AccessDeniedException), how to check a model ID
// (ResourceNotFoundException), Bedrock's own message (ValidationException),
// which limit to raise.
//
// 2 for usage errors: bad flags, an unreadable or invalid tool manifest or
// recording, no prompt.
//
// A tool that fails is not a failure of converse: the model gets an error
// result, and can adjust.
//
// # Tools
//
// The built-in tools are get_current_datetime (the local date and time in a
// strftime format) and calculator (add, subtract, multiply or divide two
// numbers). A manifest (-tools FILE) adds tools that run programs, so that
// a model can be given tools without writing Go:
//
//	{"tools": [
//	  {
//	    "name": "echo",
//	    "description": "Echo the given text back.",
//	    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
//	    "command": ["/usr/local/bin/echo-tool", "--json"],
//	    "timeout": "5s"
//	  }
//	]}
//
// For each tool:
//
//   - name (required) is what the model calls it: 1 to 64 letters, digits,
//     '_' or '-', unique, and not the name of a built-in unless -no-builtins.
//   - description (required) tells the model what the tool does and when
//     to use it.
//   - inputSchema is the JSON Schema of the input, an object schema
//     ("type": "object"); default {"type": "object"}. Each input is checked
//     against it, defaults filled in, before the program runs: an input that
//     fails is an error result for the model, and the program is not
//     started.
//   - command (required) is the program and its arguments. It runs without a
//     shell, with the arguments exactly as given; the input, a JSON object,
//     is written to its standard input, and never reaches its arguments or
//     environment. A program name without a slash is looked up in PATH; a
//     relative path is taken from the manifest's directory. It inherits the
//     environment and working directory of converse.
//   - timeout is a Go duration (default 30s). When it expires, the
//     program's whole process group is killed and the model gets an error
//     result saying the tool timed out; the conversation goes on.
//
// When the program exits with status 0, its standard output is the result:
// as it is if it is valid JSON, otherwise as a JSON string of the trimmed
// text. A non-zero exit is an error result holding the exit status and the
// end of standard error. Output over 1 MiB kills the program and is an error
// result.
//
// A manifest that is not valid JSON, has unknown fields, no tools, a
// duplicate or invalid name, a schema that is not an object schema, an empty
// command or one that is not found, or a bad timeout is a usage error naming
// the file, the tool and the problem.
//
// # JSON output
//
// With -json, standard output holds one JSON object per prompt (and no
// text), printed when the prompt is done:
//
//	{
//	  "model": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
//	  "text": "It is 14:03, and 10 + 10 = 20.",
//	  "stopReason": "end_turn",
//	  "turns": 2,
//	  "usage": {"inputTokens": 2391, "outputTokens": 201, "totalTokens": 2592},
//	  "history": [{"role": "user", "content": [{"text": "..."}]}, ...],
//	  "error": "..."
//	}
//
// history is the conversation in Bedrock's wire JSON, the "messages" of a
// Converse request; usage sums the model calls. After a failure, "error"
// holds the message printed on standard error, and the other fields what was
// done before it; the exit status is still 1.
//
// # Recording and replaying
//
// -record FILE writes every model call, the request and response bodies as
// they crossed the wire, to FILE in the Recording format of package
// github.com/tooluse/bedrock/converse/bedrocktest (see its LoadRecording).
// No header is recorded, so a recording holds no credentials, session token
// or signature, and can be committed. The file is written after each prompt,
// whether it succeeded or not.
//
// -replay FILE answers the model calls from such a recording, offline: a
// bedrocktest server on loopback replays it, and the client talks to it with
// dummy credentials, so no AWS account is needed. Tools still run for real.
// Without -model, the model is the one of the first recorded call (not
// $BEDROCK_MODEL_ID); without -stream, the operation is too (Converse or
// ConverseStream). The replay is strict: each request must be the one
// recorded (same prompt, system prompt, inference settings and tools), or
// the call fails with a list of the differences. The results of
// get_current_datetime are left out of the comparison, as the time changes
// from run to run. -replay-lenient serves the recorded answers in order
// without comparing.
//
// # Examples
//
// One prompt, with the trace of the tool calls:
//
//	converse -v "What time is it, and what is 10 + 10?"
//
// A prompt from a file, another model, more room:
//
//	converse -model us.amazon.nova-pro-v1:0 -max-tokens 4096 < question.txt
//
// Your own tools:
//
//	converse -tools tools.json "Echo hello"
//
// Record a conversation, then replay it offline, as "make demo" does with
// testdata/demo.json:
//
//	converse -record chat.json "What is 6 times 7?"
//	converse -replay chat.json -v "What is 6 times 7?"
//
// For scripts:
//
//	converse -json "What is 2 + 2?" | jq -r .text
package main
