package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/modelinfo"
	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools"
)

// defaultModel is the model used without -model or BEDROCK_MODEL_ID: the US
// cross-region inference profile of Claude Sonnet 5.5, Anthropic's current
// Sonnet. (Claude Sonnet 4.5, the default before it, is deprecated: Anthropic
// retired it on its own platforms on 2026-11-30.)
const defaultModel = "us.anthropic.claude-sonnet-5-5"

// defaultRegion is used when neither -region, AWS_REGION nor the profile
// names one: the home of defaultModel's US inference profile.
const defaultRegion = "us-east-1"

// settings are the parsed command line.
type settings struct {
	model         string
	region        string
	profile       string
	endpoint      string
	system        string
	maxTokens     int
	temperature   float64
	maxTurns      int
	maxCost       float64 // -max-cost, in US dollars
	maxTotal      int     // -max-tokens-total
	toolsFile     string
	mcpFile       string
	noBuiltins    bool
	systemTools   names
	fallbacks     names
	stopAfterTool string
	stream        bool
	record        string
	replay        string
	replayLenient bool
	json          bool
	verbose       bool
	session       string
	sessionBucket string
	yes           bool
	cache         bool
	noTrim        bool
	contextTokens int
	agentName     string
	listTools     bool
	// recordContent is OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT.
	recordContent   bool
	request         requestFlags
	addr            string        // converse serve's
	sessions        string        // converse serve's
	logJSON         bool          // converse serve's
	maxBody         int64         // converse serve's
	maxConcurrent   int           // converse serve's
	shutdownTimeout time.Duration // converse serve's

	// The deadlines, retries and hedging of model calls (callFlags), and
	// the policy made of them, shared by the conversations (setCalls).
	firstToken time.Duration
	idle       time.Duration
	hedge      float64
	retries    int
	calls      *converse.CallPolicy

	// diagnostics is standard error as run writes to it (made visible on a
	// terminal, redacted), where the SDK's log goes with -v; nil: nowhere.
	diagnostics io.Writer

	set    map[string]bool // the flags given on the command line
	prompt []string        // the arguments after the flags
}

// conversationFlags registers the flags of a conversation's model, tools,
// limits and trace: those of every command that converses.
func (s *settings) conversationFlags(fs *flag.FlagSet) {
	fs.StringVar(&s.model, "model", "", "model `ID`, inference profile or ARN (default $BEDROCK_MODEL_ID, else "+defaultModel+")")
	fs.StringVar(&s.region, "region", "", "AWS `region` (default from AWS_REGION or the profile, else "+defaultRegion+")")
	fs.StringVar(&s.profile, "profile", "", "AWS shared config `profile` (default $AWS_PROFILE)")
	fs.StringVar(&s.endpoint, "endpoint", "", "custom Bedrock Runtime endpoint `URL` (a VPC endpoint or a local server)")
	fs.StringVar(&s.system, "system", "", "system prompt `text`")
	fs.IntVar(&s.maxTokens, "max-tokens", 0, "limit each model call to `N` output tokens (default: the model's limit)")
	fs.Float64Var(&s.temperature, "temperature", 0, "sampling temperature `X`, 0 to 1 (default: the model's)")
	fs.IntVar(&s.maxTurns, "max-turns", converse.DefaultMaxTurns, "allow `N` model calls per prompt")
	fs.Float64Var(&s.maxCost, "max-cost", 0, "let the conversation spend at most `USD` dollars, at the model's on-demand prices (with -session, counted over every run)")
	fs.IntVar(&s.maxTotal, "max-tokens-total", 0, "let the conversation use at most `N` tokens, input (cache reads and writes included) and output together (with -session, counted over every run)")
	fs.StringVar(&s.toolsFile, "tools", "", "tool manifest `file` (JSON); its tools join the built-ins")
	fs.StringVar(&s.mcpFile, "mcp", "", "MCP servers' configuration `file` (JSON, as Claude Desktop's); their tools join the others")
	fs.BoolVar(&s.noBuiltins, "no-builtins", false, "leave out the built-in tools get_current_datetime and calculator")
	fs.Var(&s.systemTools, "system-tool", "offer Bedrock's server-side system tool `NAME`, such as nova_grounding (repeatable)")
	s.request.define(fs)
	s.callFlags(fs)
	fs.Var(&s.fallbacks, "fallback-model", "when a model call is throttled, the model unavailable or the call stalled (after -retries), try model `ID` (repeatable, tried in order)")
	fs.StringVar(&s.stopAfterTool, "stop-after-tool", "", "end the prompt after the turn in which tool `NAME`'s call was answered")
	fs.BoolVar(&s.stream, "stream", false, "use ConverseStream: text appears as it is generated")
	fs.StringVar(&s.replay, "replay", "", "offline: answer the model calls from the recording `file`")
	fs.BoolVar(&s.replayLenient, "replay-lenient", false, "with -replay, serve the recorded answers without comparing the requests")
	fs.BoolVar(&s.verbose, "v", false, "trace model turns, tool calls, approvals and resumes on standard error")
	fs.StringVar(&s.sessionBucket, "session-bucket", "", "with -session dynamodb://... (serve: -sessions dynamodb://...), keep a session past DynamoDB's 400 KB item limit in the S3 `bucket[/prefix]`")
	fs.BoolVar(&s.cache, "cache", false, "place prompt cache points on each request (models with prompt caching), so each turn reads the conversation so far from the cache")
	fs.BoolVar(&s.noTrim, "no-trim", false, "fail when the history outgrows the model's context window, instead of trimming its oldest exchanges and retrying")
	fs.IntVar(&s.contextTokens, "context-tokens", 0, "trim the history before a request would hold more than `N` input tokens (default: the model's known context window less the answer's room)")
	fs.BoolVar(&s.listTools, "list-tools", false, "list the tools a run with these flags would offer (name, origin, approval, description), and exit; -json for machines")
	fs.StringVar(&s.agentName, "agent-name", "converse", "the gen_ai.agent.name of the OpenTelemetry spans, `NAME`")
	fs.BoolVar(&s.yes, "yes", false, "approve every call of the tools marked \"approve\" (in the manifest or the -mcp file) without asking")
}

// The defaults of the deadlines of model calls. Without -stream the first
// token is the whole answer, and a long answer takes minutes.
const (
	defaultFirstTokenStream = 30 * time.Second
	defaultFirstToken       = 5 * time.Minute
	defaultIdle             = 15 * time.Second
	defaultRetries          = 2
)

// callFlags registers the flags of the deadlines, retries and hedging of
// the model calls: those of every command that makes them.
func (s *settings) callFlags(fs *flag.FlagSet) {
	fs.DurationVar(&s.firstToken, "first-token", 0, "cancel a model call with no first token (without -stream: no answer) after `DURATION`, and make it again; 0 for no deadline (default 30s with -stream, 5m without)")
	fs.DurationVar(&s.idle, "idle", defaultIdle, "cancel a stream silent for `DURATION` between two events, and make the call again; 0 for no deadline")
	fs.IntVar(&s.retries, "retries", defaultRetries, "make a model call that stalled (-first-token, -idle) or whose stream was cut again up to `N` times, while no tool of its turn started")
	fs.Float64Var(&s.hedge, "hedge", 0, "send a model call a second time when it has no first token by the quantile `Q` of the recent calls' first-token times, such as 0.95; the first to answer is kept (default 0: never)")
}

// checkCalls rejects deadlines, retries and a hedge that mean nothing,
// and makes the policy of the others (see setCalls).
func (s *settings) checkCalls() error {
	switch {
	case s.firstToken < 0 || s.idle < 0:
		return usagef("-first-token and -idle want a duration of 0 (no deadline) or more")
	case s.retries < 0:
		return usagef("-retries %d: want 0 or more", s.retries)
	case !(s.hedge >= 0 && s.hedge < 1):
		return usagef("-hedge %v: want a quantile above 0 and below 1, such as 0.95, or 0 for no hedging", s.hedge)
	}
	s.setCalls(s.stream)
	return nil
}

// setCalls makes the policy of the model calls of the flags, for
// conversations that stream or not. It is made before the first of them,
// which share it, and so the first-token times that -hedge reads.
// A replay is not hedged: its second request would take the next
// recorded answer.
func (s *settings) setCalls(stream bool) {
	p := &converse.CallPolicy{FirstToken: s.firstToken, Idle: s.idle, Retries: s.retries, Hedge: s.hedge, Fallback: s.fallbacks}
	if !s.set["first-token"] {
		p.FirstToken = defaultFirstToken
		if stream {
			p.FirstToken = defaultFirstTokenStream
		}
	}
	if s.retries == 0 {
		p.Retries = -1 // CallPolicy's 0 is its default
	}
	if s.replay != "" {
		p.Hedge = 0
	}
	s.calls = p
}

// terminalFlags registers the flags of one conversation at the terminal:
// its answer's form, its recording and its session.
func (s *settings) terminalFlags(fs *flag.FlagSet) {
	s.request.defineSchema(fs)
	fs.StringVar(&s.record, "record", "", "write the model calls to `file` as a recording")
	fs.BoolVar(&s.json, "json", false, "print one JSON object per prompt: text, stop reason, turns, usage, history")
	fs.StringVar(&s.session, "session", "", "keep the conversation in `file` (or dynamodb://TABLE/SESSION-ID, see converse help session): load it if it exists, save it at every step; with no prompt, resume it (its directory must exist)")
}

// conversationChecks are the checks of every command that converses.
var conversationChecks = []func(*settings) error{
	(*settings).checkModel, (*settings).checkLimits, (*settings).checkContext,
	(*settings).checkReplay, (*settings).checkEndpoint, (*settings).checkCalls, (*settings).readCaptureContent,
}

// checkModel rejects an empty model and settings no model takes.
func (s *settings) checkModel() error {
	switch {
	case s.set["model"] && strings.TrimSpace(s.model) == "":
		return usagef("-model: empty model ID")
	case s.maxTokens < 0 || s.maxTokens > math.MaxInt32:
		return usagef("-max-tokens %d: want a positive number", s.maxTokens)
	case s.set["temperature"] && !(s.temperature >= 0 && s.temperature <= 1):
		// Bedrock's Converse API takes 0 to 1 for every model.
		return usagef("-temperature %v: want a number from 0 to 1", s.temperature)
	}
	return nil
}

// checkLimits rejects limits that would stop a conversation before it
// starts.
func (s *settings) checkLimits() error {
	switch {
	case s.maxTurns < 1:
		return usagef("-max-turns %d: want at least 1", s.maxTurns)
	case s.set["max-cost"] && !(s.maxCost > 0 && s.maxCost < math.Inf(1)):
		return usagef("-max-cost %v: want a positive number of dollars", s.maxCost)
	case s.set["max-tokens-total"] && s.maxTotal < 1:
		return usagef("-max-tokens-total %d: want a positive number", s.maxTotal)
	}
	return nil
}

// checkContext rejects a -context-tokens that trims nothing.
func (s *settings) checkContext() error {
	switch {
	case s.contextTokens < 0:
		return usagef("-context-tokens %d: want a positive number", s.contextTokens)
	case s.contextTokens > 0 && s.noTrim:
		return usagef("-context-tokens and -no-trim cannot be used together: -no-trim never trims")
	}
	return nil
}

// checkReplay rejects a -replay with flags that contradict it.
func (s *settings) checkReplay() error {
	switch {
	case s.replay != "" && s.endpoint != "":
		return usagef("-replay and -endpoint cannot be used together: a replay is its own endpoint")
	case s.replayLenient && s.replay == "":
		return usagef("-replay-lenient needs -replay")
	case s.replay != "" && s.record != "" && sameFile(s.replay, s.record):
		return usagef("-record and -replay name the same file %s", s.record)
	}
	return nil
}

// checkEndpoint rejects an -endpoint that is no http or https URL.
func (s *settings) checkEndpoint() error {
	if s.endpoint == "" {
		return nil
	}
	u, err := url.Parse(s.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("-endpoint %q: want an http or https URL such as https://bedrock-runtime.us-east-1.amazonaws.com", s.endpoint)
	}
	return nil
}

// checkBucket rejects a -session-bucket that names no bucket.
func (s *settings) checkBucket() error {
	if strings.HasPrefix(s.sessionBucket, "/") {
		return usagef("-session-bucket %s: want BUCKET[/PREFIX]", s.sessionBucket)
	}
	return nil
}

// readCaptureContent reads OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
// whose value must be a boolean.
func (s *settings) readCaptureContent() (err error) {
	s.recordContent, err = captureContent()
	return err
}

// checkSession rejects a -session that cannot be kept, and a
// -session-bucket without a DynamoDB -session.
func (s *settings) checkSession() error {
	table, id, dynamo := dynamoSession(s.session)
	switch {
	case dynamo && (table == "" || id == ""):
		return usagef("-session %s: want dynamodb://TABLE/SESSION-ID", s.session)
	case s.sessionBucket != "" && !dynamo:
		return usagef("-session-bucket needs -session dynamodb://TABLE/SESSION-ID")
	case s.session != "" && !dynamo:
		// A filestore.Store would make the directory; -session, like -record,
		// takes a mistyped one as a mistake.
		if dir := filepath.Dir(s.session); !isDir(dir) {
			return usagef("-session %s: no directory %s", s.session, dir)
		}
	}
	return nil
}

// checkStopAfterTool rejects a -stop-after-tool that names no tool of reg,
// whose calls would never end a prompt.
func (s *settings) checkStopAfterTool(reg *tools.Registry) error {
	if s.stopAfterTool == "" {
		return nil
	}
	if _, ok := reg.Lookup(s.stopAfterTool); !ok {
		return usagef("-stop-after-tool %s: no such tool; the tools are %s (converse tools lists them)", trace.Printable(s.stopAfterTool), strings.Join(reg.Names(), ", "))
	}
	return nil
}

// inputLimit is the most input tokens a request to model may hold before
// the history is trimmed. It is -context-tokens if set. Else it is the
// model's known context window less the room of the answer, which is
// -max-tokens, else an eighth of the window. Without a known window it is
// 0, which trims only when Bedrock reports an overflow.
func (s *settings) inputLimit(model string) int {
	if s.contextTokens > 0 {
		return s.contextTokens
	}
	window := modelinfo.ContextWindow(model)
	answer := s.maxTokens
	if answer == 0 || answer >= window {
		answer = window / 8
	}
	return window - answer
}

// flagAfterPrompt rejects a word of the prompt that is one of converse's
// flags, such as the -v of converse "hello" -v. The flag package stops at
// the first word that is not a flag. The flag would then be sent to the
// model as text. After --, every word is the prompt's.
func flagAfterPrompt(fs *flag.FlagSet, args []string) error {
	rest := fs.Args()
	if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
		return nil
	}
	for _, w := range rest {
		if w == "--" {
			return nil
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-"), "=")
		if !strings.HasPrefix(w, "-") || (fs.Lookup(name) == nil && name != "h" && name != "help") {
			continue
		}
		return usagef("flag %s after the prompt: put the flags first (converse %s PROMPT), or -- before the prompt to send %s as text", w, w, w)
	}
	return nil
}

// budget is the conversation's budget of -max-cost and -max-tokens-total,
// nil without them. The limits are the conversation's, not each prompt's:
// they bound a chat as a whole, and a -session over all its runs, as its
// usage is kept in the file.
func (s *settings) budget() *converse.Budget {
	if s.maxCost == 0 && s.maxTotal == 0 {
		return nil
	}
	return &converse.Budget{Conversation: converse.Limits{CostUSD: s.maxCost, TotalTokens: s.maxTotal}}
}

// checkPrices rejects -max-cost for a model whose prices are unknown, before
// any model call.
func (s *settings) checkPrices(model string) error {
	if _, ok := modelinfo.PricesOf(model); s.maxCost > 0 && !ok {
		return usagef("-max-cost: the prices of model %s are not known to converse, so its cost cannot be counted", trace.Printable(model))
	}
	return nil
}

// modelID picks the model: -model, else the recording's first model when
// replaying, else $BEDROCK_MODEL_ID, else defaultModel.
func (s *settings) modelID(firstRecorded string) string {
	switch {
	case s.set["model"]:
		return strings.TrimSpace(s.model)
	case firstRecorded != "":
		return firstRecorded
	}
	if id := strings.TrimSpace(os.Getenv("BEDROCK_MODEL_ID")); id != "" {
		return id
	}
	return defaultModel
}

// names is a repeatable flag's values, in order.
type names []string

func (n *names) String() string { return strings.Join(*n, ",") }

func (n *names) Set(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return errors.New("empty name")
	}
	*n = append(*n, v)
	return nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func sameFile(a, b string) bool {
	if fa, err := os.Stat(a); err == nil {
		if fb, err := os.Stat(b); err == nil {
			return os.SameFile(fa, fb)
		}
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// promptLong is what converse -h says before the commands and flags.
const promptLong = `Converse holds a tool-use conversation with a model on Amazon Bedrock. The
prompt is the arguments joined by spaces; without any, it is read from
standard input, and when standard input is a terminal, converse chats: each
line is a message, and the conversation is kept (Ctrl-C cancels a turn,
Ctrl-D leaves, /help lists the commands). The model's text goes to
standard output as it arrives; diagnostics go to standard error.
`

// promptMore is what converse -h says after its flags: the exit status,
// examples and the help topics.
func promptMore() string {
	return "\n" + helpText("exit") + fmt.Sprintf(`
Examples:
  converse "What time is it?"
  converse -tools mytools.json -v "Echo hello"
  converse -record chat.json "What is 2 + 2?" && converse -replay chat.json "What is 2 + 2?"
  converse -replay testdata/demo.json -v %q

More: converse help manifest (the -tools file), converse help mcp (the -mcp
file), converse help json (the -json object), converse help recording
(-record and -replay), converse help view (converse view), converse help
session (-session), converse help serve (serve in a container), converse
help eval (converse eval), converse help telemetry (OTLP export), converse
help exit.
`, demoPrompt)
}
