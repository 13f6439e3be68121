// Converse holds a whole tool-use conversation with a model on Amazon
// Bedrock from the terminal: it sends the prompt, runs the tools the model
// asks for, sends their results back, and prints the model's answer.
//
// Usage:
//
//	converse [flags] [prompt ...]
//
// The prompt is the arguments joined by spaces, after the flags. A word of
// the prompt that is one of converse's flags (converse "hello" -v) is a
// usage error, never sent as text, unless -- comes before the prompt.
// Without arguments the prompt is read from standard input. Empty standard
// input, such as /dev/null, is a usage error.
//
// When standard input is a terminal, converse is an interactive chat
// instead. Each line is a user message, and the conversation's history is
// kept from one message to the next. Ctrl-D, /exit, or Ctrl-C twice at the
// prompt ends it. A message that fails is reported, and the chat goes on as
// if it had not been sent. Ctrl-C during a turn cancels that turn only: the
// model call, or the running tools, whose programs are ended. The chat
// keeps what the turn completed and returns to the prompt. After a
// cancelled tool round, the next message first lets the model see the
// cancelled calls' results.
//
// Lines are edited as in a shell: Left, Right, Home, End, Alt-Left,
// Alt-Right, Ctrl-W, Ctrl-U. Up and Down go through the history, kept
// across runs in $XDG_STATE_HOME/converse/history, else
// ~/.local/state/converse/history, or in the file $CONVERSE_HISTORY names
// (CONVERSE_HISTORY=off keeps none). A pasted block of lines is one
// message, sent with Enter. The commands are /tools, /history, /save FILE
// (the conversation's state as JSON, which -session FILE reads), /reset,
// /help and /exit; //TEXT sends /TEXT.
//
// The model's text goes to standard output as it arrives, turn by turn;
// diagnostics, and with -v a trace, go to standard error. When standard
// error is a terminal, one status line there says what runs (not with -v
// or -json, nor when TERM is unset or dumb). It shows the turn, how long
// the model call has taken, and the tools running and for how long. It
// shows what an MCP server last reported of a call's progress, such as
// "converse: turn 2 · running fetch 4s (1/2 half way)". It is redrawn in
// place a few times a second, and erased before the model's text, the
// approval prompt and the end of the run. With -v, each progress
// notification of an MCP server is a trace line.
//
// # Flags
//
//	-model ID         model ID, inference profile or ARN; default $BEDROCK_MODEL_ID,
//	                  else us.anthropic.claude-sonnet-5-5; one of no family
//	                  converse knows (modelinfo.KnownFamily) runs with a warning
//	-region REGION    AWS region; default from AWS_REGION or the profile, else us-east-1
//	-profile NAME     profile of the shared config files (~/.aws/config, ~/.aws/credentials)
//	-endpoint URL     custom Bedrock Runtime endpoint: a VPC endpoint, or a local server
//	-system TEXT      system prompt
//	-max-tokens N     most output tokens of each model call; default the model's
//	-temperature X    sampling temperature, 0 to 1; default the model's
//	-max-turns N      most model calls per prompt (default 10)
//	-max-cost USD     most the conversation may spend, in US dollars at the model's
//	                  on-demand prices (Claude and Amazon Nova models; another model is a
//	                  usage error); no model call may pass it, as each call's max_tokens is
//	                  capped to what is left
//	-max-tokens-total N  most tokens the conversation may use, input (cache reads and
//	                  writes included) and output together, likewise. Both limits are the
//	                  conversation's: a chat's as a whole, a -session's over all its runs.
//	                  One reached exits 5 naming it and what was spent, between two steps,
//	                  so a -session resumes from there when run again with a raised limit
//	-tools FILE       tool manifest (converse help manifest); its tools join the built-ins
//	-mcp FILE         MCP servers (converse help mcp); their tools join the others
//	-no-builtins      leave out the built-in tools get_current_datetime and calculator
//	-system-tool NAME offer Bedrock's server-side system tool NAME, such as nova_grounding
//	                  (repeatable); Bedrock runs its calls itself
//	-fallback-model ID when a model call is throttled (after the SDK's retries), the model
//	                  not ready or timed out, the service unavailable, or the call stalled
//	                  (after -retries), make it with ID (repeatable, tried in order; never
//	                  on a validation error)
//	-first-token DURATION  cancel a model call with no first token after DURATION (without
//	                  -stream, no answer), and make it again; default 30s with -stream,
//	                  5m without (a long answer takes minutes); 0 for no deadline
//	-idle DURATION    cancel a stream silent for DURATION between two events, and make the
//	                  call again (default 15s; 0 for no deadline)
//	-retries N        make a call that stalled, or whose stream was cut, again up to N
//	                  times (default 2), while no tool of its turn started
//	-hedge Q          send a call a second time when it has no first token by the quantile
//	                  Q (such as 0.95) of the recent calls' first-token times; the first to
//	                  answer is kept, the other cancelled (default 0: never; not with -replay)
//	-stop-after-tool NAME end the prompt after the turn in which a call of tool NAME was
//	                  answered (exit 0, that turn's text printed); the task is then
//	                  stopped: a -session's next prompt goes to the model at once,
//	                  after the results, and a run without a prompt resumes the task
//	-yes              approve every call of the tools marked "approve" (in the manifest or
//	                  the -mcp file) without asking; without it converse asks on the
//	                  terminal, and denies them when there is none
//	-session FILE     keep the conversation in FILE: load it if it exists, save it at every
//	                  step; resume an interrupted one (alone with no prompt, else before
//	                  the prompt); its directory must exist. dynamodb://TABLE/SESSION-ID
//	                  keeps it in a DynamoDB item instead (converse help session)
//	-session-bucket BUCKET[/PREFIX]
//	                  with a DynamoDB -session, keep a session past 400 KB in S3
//	-stream           use ConverseStream, so text appears as it is generated
//	-record FILE      write the model calls to FILE as a recording
//	-replay FILE      offline: answer the model calls from the recording FILE
//	-replay-lenient   with -replay, serve the recorded answers without comparing requests
//	-cache            place prompt cache points on each request, for the models with prompt caching
//	-no-trim          fail when the history outgrows the model's context window; by default
//	                  its oldest exchanges are dropped before a request would outgrow the
//	                  model's known window (-v says so), and when Bedrock reports an overflow
//	-context-tokens N trim the history before a request holds more than N input tokens;
//	                  default the model's known context window less the answer's room
//	                  (-max-tokens, else an eighth of the window)
//	-schema FILE      answer with a JSON object matching the JSON Schema in FILE: the answer
//	                  is validated (an invalid one goes back to the model to correct) and
//	                  printed once valid, as "structured" with -json; a bad schema is a usage error
//	-guardrail ID:VERSION  apply the Bedrock guardrail ID (or ARN) at VERSION, with its trace
//	-service-tier T   ask for the service tier priority, default, flex or reserved
//	-latency L        ask for optimized (or standard) latency, where the model offers it
//	-list-tools       list the tools a run with these flags would offer (name, where it comes
//	                  from: built-in, manifest, lambda:FUNCTION, mcp:SERVER; whether it asks
//	                  for approval; description) and exit, with no model call; -json gives a
//	                  JSON array. "converse tools [flags]" is the same
//	-agent-name NAME  the gen_ai.agent.name of the OpenTelemetry spans (default converse)
//	-json             print one JSON object per prompt (converse help json), and no text;
//	                  its costUSD is rounded to 6 decimal places
//	-v                trace each turn (with its cost, when the prices are known), tool call,
//	                  approval and resume on standard error, and each prompt's total; and
//	                  the endpoint, the auth, a loaded -session and each retry of a model
//	                  call (why, and how long it waits)
//	-h                print the usage
//
// Credentials and region come from -profile and -region, or else from the
// AWS SDK's default chain, as for the AWS CLI: the environment
// (AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_REGION...), the shared config files,
// SSO, and the EC2 or container roles. They are looked for before the first
// model call, so a machine without any fails at once. A Bedrock API key in
// AWS_BEARER_TOKEN_BEDROCK is enough instead, and is then used in their
// place. It is sent as a bearer token over HTTPS only: an http endpoint,
// of -endpoint or of the configuration (AWS_ENDPOINT_URL_BEDROCK_RUNTIME),
// is a usage error, but for a local one, which gets no key. With -v,
// converse says which authentication is used. It also says when a flag
// does nothing for the model: -cache for a model without prompt caching
// (modelinfo.PromptCaching). It says how -schema's answer is given:
// natively, or by a final tool (modelinfo.NativeStructuredOutput).
// Throttling and server errors are retried by the SDK (AWS_MAX_ATTEMPTS,
// AWS_RETRY_MODE).
//
// A model call that stalls is cancelled and made again: one with no first
// token by -first-token, or a stream silent for -idle. So is a stream cut
// by the network. Each retry is a line on standard error (in the trace with
// -v), such as "converse: turn 1: model stalled (no first token for 30s);
// retry 1 in 150ms". A hedged call gets one too. Text the failed call had
// printed is followed by the line "[the text above is superseded; the model
// is asked again]", then the retry's text. With -json nothing is printed
// twice. A call still stalled after -retries goes to the -fallback-model,
// or fails with exit status 3.
//
// With -endpoint on loopback (localhost, 127.0.0.0/8, ::1), such as a
// bedrocktest server, missing credentials are no error: the requests go
// unsigned, unless credentials are named (-profile, AWS_PROFILE,
// AWS_ACCESS_KEY_ID, or AWS_BEARER_TOKEN_BEDROCK with an https endpoint).
//
// An AWS error body can echo the signed request. So everything converse
// prints on standard error, and the "error" of -json, has AWS credentials,
// session tokens and signatures redacted (recording.Redact). The -v trace
// shows at most 300 characters of a prompt, tool input or result. It quotes
// model-controlled ids and names that hold control characters, and so is an
// MCP server's failure or warning quoted, on a terminal or not.
//
// On a terminal, what the model, the tools and the MCP servers wrote
// reaches standard output and error with its control characters shown, not
// acted on. ESC shows as ^[, CR as ^M, and C1 controls and bidirectional
// overrides as \u escapes; newline and tab are kept. A file or a pipe gets
// the text as it is. The approval prompt resets the terminal and clears its
// line first. It quotes the tool's name, and shows the whole input, however
// long, in compact JSON.
//
// # Serving on Bedrock AgentCore Runtime
//
// "converse serve [flags]" serves the conversations of the other flags
// (-model, -endpoint, -tools, -mcp, -yes, ...) over the HTTP protocol
// contract of Amazon Bedrock AgentCore Runtime, with package
// converse/agentcore. It answers POST /invocations and GET /ping on -addr,
// 127.0.0.1:8080 by default. Serve authenticates no caller; in the
// runtime's container, which authenticates them, it listens on
// 0.0.0.0:8080. Each session's conversation is kept in -sessions: by
// default /mnt/data/converse, under the runtime's session storage.
// -sessions dynamodb://TABLE keeps each in the table's item of its runtime
// session id, with -session-bucket for sessions past 400 KB.
//
// Without -yes, a call that needs approval pauses its invocation, whose
// answer lists it; the next invocation carries the decisions. An MCP
// server's question pauses it too, -yes or not, and the next invocation
// answers it (converse help mcp). An invocation
// that reaches -max-turns or a budget answers 200 with the "status" "limit"
// and what was done, never a 5xx. Package converse's doc (Outcomes) has the
// table of HTTP statuses. On SIGTERM serve takes no more invocations, and
// lets those running finish within -shutdown-timeout (default 30s). Then it
// cuts off the rest, which answer 503 saying the server is stopping; their
// sessions keep their completed steps. "converse serve -h" says more; a
// prompt of the one word "serve" goes after --. converse help serve gives a
// Dockerfile for the runtime, and says which programs command tools can run
// in its image.
//
// # Telemetry
//
// With OTEL_EXPORTER_OTLP_ENDPOINT set, converse exports OpenTelemetry
// traces and metrics in the GenAI semantic conventions over OTLP
// (converse help telemetry). Without it, converse exports nothing.
//
// # Help topics
//
// The binary carries the rest of this manual, so that it can be read where
// converse is installed. "converse -h" prints the flags and the exit
// status. "converse help" lists the topics, each with a line saying what it
// holds, and "converse help TOPIC" prints one of them. Their text is in the
// help directory beside this file:
//
//	converse help manifest    the tool manifest of -tools
//	converse help mcp         the MCP servers of -mcp
//	converse help json        the object printed by -json
//	converse help recording   -record and -replay
//	converse help view        converse view, the transcript as HTML
//	converse help session     -session: a file or a DynamoDB item, layout, IAM actions
//	converse help serve       converse serve in AgentCore Runtime: a Dockerfile, the programs
//	converse help eval        converse eval: a dataset of cases, pass rates, JUnit XML
//	converse help telemetry   the OpenTelemetry export and its OTEL_ variables
//	converse help exit        the exit status
//
// A command line of one or two words starting with "help" asks for help; to
// send such a prompt, put -- before it.
//
// # Transcripts
//
//	converse view [-o FILE] [-price IN,OUT[,READ,WRITE]] INPUT
//
// writes a session (a file, or dynamodb://TABLE/ID read without a lease),
// a recording or -json output as one self-contained HTML page (converse
// help view). It shows one timeline of the whole conversation's turns and
// their tool calls, tokens, cache and cost, at the model's known prices or
// -price's. Every text from the input is shown as text. A command line
// starting with the word "view" is this command, a usage error without its
// INPUT file; to send such a prompt, put -- before it. A tool output
// holding <script> or an onerror= attribute runs nothing on the page:
// TestViewInBrowser checks that in headless Chromium.
//
// # Evaluations
//
//	converse eval [-replay FILE | -endpoint URL] [-junit FILE] [-runs N] DATASET
//
// runs the cases of a dataset (a YAML or JSON file) against the agent: the
// model, tools and deadlines of the flags. It prints each case's pass rate
// against its threshold, and exits 1 when one is below it (converse help
// eval). -junit writes JUnit XML for CI. The package
// github.com/tooluse/bedrock/converse/evaltest does the same from go test.
// A command line starting with the word "eval" is this command; to send
// such a prompt, put -- before it.
//
// # Exit status
//
// The exit status is 0 when the model finished and 2 for usage errors.
// Otherwise it is a status for each outcome of the conversation (go doc
// github.com/tooluse/bedrock/converse, Outcomes, which says how converse
// serve answers the same outcomes over HTTP):
//
//   - 3 for a failure worth trying again later (throttling, a server error)
//   - 4 for a request Bedrock refuses as it stands (credentials, model
//     access, validation)
//   - 5 for a limit reached (-max-turns, -max-cost, -max-tokens-total)
//   - 6 for calls awaiting a decision
//   - 7 for a -session held or saved by another process
//   - 130 when interrupted
//   - 1 for any other failure
//
// Each failure is one line on standard error, with a hint where one helps.
// Ctrl-C or SIGTERM cancels
// the conversation, and converse exits once the programs of running tools
// are killed; a second Ctrl-C exits at once. A tool that fails is not a
// failure of converse: the model gets an error result, and can adjust. See
// converse help exit.
//
// # Tools
//
// The built-in tools are get_current_datetime (the local date and time in a
// strftime format) and calculator (add, subtract, multiply or divide two
// numbers). A manifest (-tools FILE) adds tools that run programs: a JSON
// file naming, for each tool, its name, description, input schema, program
// and arguments, timeout and environment (converse help manifest). A
// program runs without a shell and gets its input, a JSON object, on
// standard input, never in its arguments or environment. A relative program
// path is taken from the manifest's directory, never from PATH. A program
// gets a minimal environment (PATH, HOME, LANG, TZ, TMPDIR and the like),
// never AWS credentials, unless the manifest's "env" or "inheritEnv" says
// otherwise.
//
// # Recording and replaying
//
// -record FILE writes every model call to FILE, before the first call and
// after each prompt. The format is that of package
// github.com/tooluse/bedrock/converse/recording: versioned, no headers,
// credentials redacted, mode 0600. -replay FILE answers the model calls
// from one, in process and offline, strictly (converse help recording).
// "make demo" replays testdata/demo.json.
//
// # Examples
//
// One prompt, with the trace of the tool calls:
//
//	converse -v "What time is it, and what is 10 + 10?"
//
// The demo, offline, in a checkout of the repository:
//
//	converse -replay testdata/demo.json -v "What is 6 times 7, and what is 10 + 10?"
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
//
// A chat, recorded with tmux (the model's replies scripted in bedrocktest;
// du is a manifest tool whose program takes a minute; Ctrl-C while it ran,
// Ctrl-D at the last prompt):
//
//	$ converse -tools tools.json -no-builtins
//	Chatting with us.anthropic.claude-sonnet-5-5: Ctrl-C cancels a turn, Ctrl-D leaves; /help lists
//	the commands.
//	> How big is /var/log?
//	Let me measure it.
//	^Cconverse: turn cancelled; what was completed is kept
//	> hello
//	The measurement was cancelled, so I have no size for /var/log yet.
//	Hello again. Ask me about /var/log whenever you like.
//	> /save trip.json
//	Saved 6 messages to trip.json.
//	>
//
// The cancelled call was answered as cancelled, and its program ended. The
// next message resumed the conversation first, so the model heard why.
package main
