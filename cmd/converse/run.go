package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"golang.org/x/term"

	"github.com/tooluse/bedrock/cmd/converse/internal/printing"
	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/modelinfo"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools"
)

// promptCommand is the default command: a prompt sent, or a chat at the
// terminal.
var promptCommand = &command{
	usageLine: "converse [flags] [prompt ...]",
	long:      promptLong,
	more:      promptMore,
	flags:     terminalCommandFlags,
	checks:    terminalChecks,
	run:       converseAt,
}

// toolsCommand is converse tools: the default command's -list-tools.
var toolsCommand = &command{
	name:      "tools",
	usageLine: "converse tools [flags]",
	short:     "list the tools a run with these flags would offer, and exit (as -list-tools)",
	long:      "Tools lists the tools a run with these flags would offer, and exits: their\nnames, origins, approval and descriptions; -json gives a JSON array.\n",
	flags:     terminalCommandFlags,
	checks:    terminalChecks,
	run: func(ctx context.Context, inv *invocation) error {
		inv.s.listTools = true
		return converseAt(ctx, inv)
	},
}

// terminalCommandFlags are the flags of a conversation at the terminal.
func terminalCommandFlags(s *settings, fs *flag.FlagSet) {
	s.conversationFlags(fs)
	s.terminalFlags(fs)
}

// terminalChecks are the checks of a conversation at the terminal.
var terminalChecks = append(conversationChecks[:len(conversationChecks):len(conversationChecks)],
	(*settings).checkSession, (*settings).checkBucket)

// toolbox is what the commands that converse set up alike: the tools
// offered (built-in, the manifest's, the MCP servers') and the recording
// to replay.
type toolbox struct {
	calls  *running // the calls of the manifest's programs
	reg    *tools.Registry
	origin func(name string) string // where a tool comes from (see toolOrigins)
	rec    *recording.Recording     // -replay's; nil without
	fns    *functions               // what the manifest's entries call, agents' client included
}

// withTools sets up the telemetry and a toolbox for inv's settings, runs
// body with it, and tears them down: the tools' programs are reaped, then
// the telemetry is flushed, so the calls' spans are ended. With
// -list-tools, body does not run: the tools are listed instead. progress,
// if not nil, relays the MCP servers' progress.
func withTools(ctx context.Context, inv *invocation, progress *progressRelay, body func(*toolbox) error) (err error) {
	s := inv.s
	flush, err := setupTelemetry(ctx, inv.stderr)
	if err != nil {
		return err
	}
	defer func() {
		if interrupted := flush(ctx); err == nil {
			err = interrupted
		}
	}()
	tb := &toolbox{calls: &running{}}
	// Even on an interrupt, no program of a tool outlives converse.
	defer tb.calls.wait()
	fns := newFunctions(s, inv.stderr)
	tb.fns = fns
	if tb.reg, err = registry(s, tb.calls, fns); err != nil {
		return err
	}
	bridge, stopMCP, err := startMCP(ctx, s, tb.reg, inv.stderr, progress)
	if err != nil {
		return err
	}
	defer stopMCP()
	if err := s.checkStopAfterTool(tb.reg); err != nil {
		return err
	}
	tb.origin = toolOrigins(s, fns, bridge)
	if s.listTools {
		return listTools(inv.stdout, tb.reg, tb.origin, s.json)
	}
	if tb.rec, err = loadReplay(s.replay); err != nil {
		return err
	}
	return body(tb)
}

// converseAt is the default command: the prompt sent, a -session resumed,
// or a chat at the terminal.
func converseAt(ctx context.Context, inv *invocation) error {
	s := inv.s
	if s.listTools && len(s.prompt) > 0 {
		return usagef("converse tools takes no prompt (got %q): it lists the tools and exits", strings.Join(s.prompt, " "))
	}
	// The spans of a prompt or a chat join the trace of TRACEPARENT, if
	// it is set: that of the program that runs converse. Serve's do not:
	// each invocation is a trace of its own, or its caller's.
	ctx = withTraceParent(ctx)
	progress := &progressRelay{}
	return withTools(ctx, inv, progress, func(tb *toolbox) error {
		prompt, interactive, err := readPrompt(s.prompt, inv.stdin)
		resumeOnly := err != nil && isUsage(err) && s.session != "" && len(s.prompt) == 0
		if err != nil && !resumeOnly {
			return err
		}
		b, err := newBackend(ctx, s, tb.rec)
		if err != nil {
			return err
		}
		defer b.close()
		tb.fns.bedrock.set(b.client)
		// An empty recording now: a -record file that cannot be written is
		// found before the first (paid) model call, and some file is left
		// whatever happens next.
		if err := b.save(s.record); err != nil {
			return &usageError{err}
		}
		sess, err := newSession(ctx, s, tb.rec, tb.reg, b, inv.stdin, inv.stdout, inv.stderr)
		if err != nil {
			return err
		}
		sess.print.status = newStatus(inv.tty, s, os.Getenv("TERM"))
		progress.set(sess.print.progress)
		return sess.converse(ctx, inv, tb, prompt, interactive, resumeOnly)
	})
}

// converse resumes the session's task left open, then sends the prompt or
// chats. A task left open is resumed first; a stopped one only without a
// prompt (resumeOnly): a prompt starts the next task at once.
func (ss *session) converse(ctx context.Context, inv *invocation, tb *toolbox, prompt string, interactive, resumeOnly bool) error {
	s := ss.s
	if s.session != "" && (resumeOnly || !ss.conv.State().Stopped) {
		resumed, err := ss.resume(ctx, inv.stdin)
		if err != nil {
			return err
		}
		if resumeOnly && !resumed {
			return nothingToResume(ctx, s)
		}
		if resumeOnly {
			return nil
		}
	}
	if interactive {
		ss.calls = tb.calls
		ss.listTools = func(w io.Writer) error { return listTools(w, tb.reg, tb.origin, false) }
		return ss.chat(ctx, inv.stdin, inv.tty)
	}
	ss.print.Prompt(prompt)
	return ss.send(ctx, prompt)
}

// firstExchange is the first exchange of rec, the zero one without.
func firstExchange(rec *recording.Recording) recording.Exchange {
	if rec == nil || len(rec.Exchanges) == 0 {
		return recording.Exchange{}
	}
	return rec.Exchanges[0]
}

// registry holds the built-ins, unless -no-builtins, and the tools of the
// -tools manifest, whose calls are counted in calls and whose Lambda
// functions fns invokes.
func registry(s *settings, calls *running, fns *functions) (*tools.Registry, error) {
	var ts []*tools.Tool
	if !s.noBuiltins {
		ts = tools.Builtins()
	}
	if s.toolsFile != "" {
		taken := make([]string, len(ts))
		for i, t := range ts {
			taken[i] = t.Name()
		}
		more, err := loadManifest(s.toolsFile, taken, fns)
		if err != nil {
			return nil, err
		}
		for _, t := range more {
			tracked, err := calls.track(t)
			if err != nil {
				return nil, err
			}
			ts = append(ts, tracked)
		}
	}
	return tools.NewRegistry(ts...)
}

// loadReplay reads the -replay recording; a file that cannot be used is a
// usage error.
func loadReplay(path string) (*recording.Recording, error) {
	if path == "" {
		return nil, nil
	}
	rec, err := recording.Load(path)
	if err != nil {
		return nil, usagef("-replay: %w", err)
	}
	return rec, nil
}

// readPrompt finds the prompt: the arguments, else standard input, unless
// standard input is a terminal, which means an interactive chat. Standard
// input that is neither a terminal nor holds a prompt (such as /dev/null)
// is a usage error.
func readPrompt(args []string, stdin io.Reader) (prompt string, interactive bool, err error) {
	if len(args) > 0 {
		if prompt = strings.TrimSpace(strings.Join(args, " ")); prompt == "" {
			return "", false, usagef("empty prompt")
		}
		return prompt, false, nil
	}
	if stdin == nil {
		return "", false, usagef("no prompt: give it as arguments or on standard input")
	}
	if isTerminal(stdin) {
		return "", true, nil
	}
	b, err := io.ReadAll(stdin)
	if err != nil {
		return "", false, fmt.Errorf("reading the prompt from standard input: %w", err)
	}
	if prompt = strings.TrimSpace(string(b)); prompt == "" {
		return "", false, usagef("no prompt: give it as arguments or on standard input")
	}
	return prompt, false, nil
}

// isTerminal reports whether f, a reader or a writer, is a terminal, asking
// the system about its file descriptor: a character device such as
// /dev/null is not one.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}

// session is a conversation with its output: what run and chat share.
type session struct {
	s       *settings
	model   string
	conv    *converse.Conversation
	print   *printer
	backend *backend
	where   where
	stdout  io.Writer
	// structured is the answer of a -schema prompt, for -json.
	structured json.RawMessage
	// lines reads the chat's lines at the terminal while it chats, and
	// the approval prompt's answers: a second reader of the terminal would
	// take lines typed for the chat, and the reverse. term is where the
	// line editor writes, the terminal as it is.
	lines *lineReader
	term  io.Writer
	// cancelTurn cancels the chat's turn in progress (a Ctrl-C at the
	// approval prompt), nil between turns.
	cancelTurn func()
	calls      *running                      // the command tools' calls, waited for after a cancelled turn
	listTools  func(io.Writer) error         // /tools
	reset      func() *converse.Conversation // /reset: a new conversation; nil with -session
}

func newSession(ctx context.Context, s *settings, rec *recording.Recording, reg *tools.Registry, b *backend, stdin io.Reader, stdout, stderr io.Writer) (*session, error) {
	first := firstExchange(rec)
	model := s.modelID(first.ModelID)
	stream := s.stream
	if !s.set["stream"] && first.Operation == recording.OpConverseStream {
		stream = true // replay the way it was recorded
	}
	s.setCalls(stream) // a replay that streams as recorded has a stream's deadlines
	// With -schema the answer is printed once validated, not as it arrives.
	p := &printer{Printer: printing.Printer{Stdout: stdout, NoText: s.json || s.request.schema != nil}, stderr: stderr}
	if s.verbose {
		p.Trace = trace.New(stderr)
	}
	ss := &session{
		s: s, model: model, print: p, backend: b, stdout: stdout,
		where: where{model: model, region: b.region, endpoint: s.endpoint, replay: s.replay, session: s.session, maxTurns: s.maxTurns, maxTokens: s.maxTokens, noTrim: s.noTrim},
	}
	opts := func(o *converse.Options, model string) {
		s.conversationOptions(o, model)
		if stream {
			o.Stream = &converse.StreamPolicy{}
		}
		o.OnEvent = p.event
		if s.session == "" {
			o.Telemetry.ConversationID = newConversationID() // -session's id is the session's
		}
		if p.Trace != nil {
			o.Logger = slog.New(p.Trace.Handler())
		}
		o.Approver = ss.approver(stdin)
	}
	conv, err := openConversation(ctx, s, b.client, model, reg, opts)
	if err != nil {
		return nil, err
	}
	if s.session == "" {
		ss.reset = func() *converse.Conversation {
			return converse.New(b.client, ss.model, reg, func(o *converse.Options) { opts(o, ss.model) })
		}
	}
	ss.conv = conv
	// A restored -session talks to the model it was started with, which
	// the header, -json and the hints name, not the default.
	ss.model = conv.State().ModelID
	ss.where.model = ss.model
	if err := s.checkPrices(ss.model); err != nil {
		return nil, err
	}
	ss.announce(stderr)
	if s.verbose {
		b.retried = traceRetries(p.Trace)
	}
	return ss, nil
}

// announce says what the session talks to. On stderr, it warns of a
// model of no family converse knows. In the -v trace, it names the model,
// where it is reached and how, what the flags do not do for it, and a
// loaded -session.
func (ss *session) announce(stderr io.Writer) {
	s := ss.s
	if !modelinfo.KnownFamily(ss.model) {
		fmt.Fprintf(stderr, "converse: warning: model %s is of no family converse knows (Anthropic, Amazon, Meta, Mistral, Cohere, DeepSeek, Writer): "+
			"defaults apply (no toolResult status, tools while streaming, no known context window, prices or prompt caching); check -model\n", trace.Printable(ss.model))
	}
	if s.replay != "" {
		ss.print.Replaying(ss.model, s.replay)
	} else {
		ss.print.Tracef("· model %s in region %s\n", trace.Printable(ss.model), ss.backend.region)
		if s.endpoint != "" {
			ss.print.Tracef("· endpoint %s (-endpoint)\n", s.endpoint)
		}
		ss.print.Tracef("· auth: %s\n", ss.backend.auth)
	}
	traceNoEffect(ss.print, s, ss.model)
	if st := ss.conv.State(); s.session != "" && len(st.Messages) > 0 {
		ss.print.Tracef("· session %s loaded: %s with %s\n", s.session, plural(len(st.Messages), "message"), trace.Printable(st.ModelID))
	}
}

// traceNoEffect says in the -v trace what the flags do for model, when it
// is not what they say: -cache on a model without prompt caching, and how
// -schema's answer is given.
func traceNoEffect(p *printer, s *settings, model string) {
	if s.cache && !modelinfo.PromptCaching(model) {
		p.Tracef("· -cache has no effect: %s has no prompt caching\n", trace.Printable(model))
	}
	switch {
	case s.request.schema == nil:
	case modelinfo.NativeStructuredOutput(model):
		p.Tracef("· -schema: %s answers in the schema natively (outputConfig.textFormat)\n", trace.Printable(model))
	default:
		p.Tracef("· -schema: %s has no native structured output: the answer is a call of a final tool, its input validated\n", trace.Printable(model))
	}
}

// conversationOptions sets what the flags say of a conversation with model, at the
// terminal and served alike.
func (s *settings) conversationOptions(o *converse.Options, model string) {
	if s.system != "" {
		o.Request.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: s.system}}
	}
	o.Request.InferenceConfig = inferenceConfig(s)
	o.MaxTurns = s.maxTurns
	o.Telemetry.RecordContent, o.Telemetry.AgentName = s.recordContent, s.agentName
	o.Budget = s.budget()
	o.SystemTools = s.systemTools
	o.ModelCalls = s.calls
	if s.stopAfterTool != "" {
		o.PrepareTurn = stopAfter(s.stopAfterTool)
	}
	s.request.apply(o)
	if s.cache {
		o.Cache = &converse.CachePolicy{}
	}
	if !s.noTrim {
		// Trim before a request outgrows the window, and when Bedrock
		// reports an overflow all the same.
		o.Context = &converse.ContextPolicy{MaxInputTokens: s.inputLimit(model)}
	}
}

func inferenceConfig(s *settings) *types.InferenceConfiguration {
	if s.maxTokens == 0 && !s.set["temperature"] {
		return nil
	}
	c := &types.InferenceConfiguration{}
	if s.maxTokens > 0 {
		c.MaxTokens = aws.Int32(int32(s.maxTokens))
	}
	if s.set["temperature"] {
		c.Temperature = aws.Float32(float32(s.temperature))
	}
	return c
}

// traceRetries is a backend's retried that writes each retry of a model
// call to tr.
func traceRetries(tr *trace.Trace) func(attempt int, wait time.Duration, why error) {
	return func(attempt int, wait time.Duration, why error) {
		tr.Printf("· model call failed (%s); retry %d in %v\n", trace.Short(retryReason(why)), attempt, wait.Round(time.Millisecond))
	}
}

// retryReason is what a retried model call failed with: the code of
// Bedrock's error (ThrottlingException: Too many requests), else the
// error's text.
func retryReason(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode() + ": " + api.ErrorMessage()
	}
	return err.Error()
}

// send sends one prompt and reports its outcome: the text has been printed
// as it arrived; here come the -json object, the -record file and the
// failure, if any.
func (ss *session) send(ctx context.Context, prompt string) error {
	ss.print.status.begin()
	if ss.s.request.schema == nil {
		res, err := ss.conv.Send(ctx, prompt)
		ss.print.status.end()
		return ss.report(res, err)
	}
	answer, res, err := converse.StructuredJSON(ctx, ss.conv, prompt, ss.s.request.schema)
	ss.print.status.end()
	ss.structured = answer
	defer func() { ss.structured = nil }()
	if err == nil && !ss.s.json {
		fmt.Fprintf(ss.stdout, "%s\n", answer)
	}
	return ss.report(res, err)
}

// report reports the outcome of a Send or Resume.
func (ss *session) report(res *converse.Result, err error) error {
	ss.print.EndText()
	if res != nil {
		ss.print.Citations(res.Citations)
		ss.print.Total(res)
	}
	err = explain(err, ss.where)
	var jsonErr error
	if ss.s.json {
		jsonErr = writeJSON(ss.stdout, ss.model, res, ss.structured, err)
	}
	saveErr := ss.backend.save(ss.s.record)
	if err == nil && res != nil {
		ss.print.warnStop(res.StopReason, ss.s.maxTokens)
	}
	return errors.Join(err, jsonErr, saveErr)
}

// stopAfter is the turn hook of -stop-after-tool: it ends the Send before
// the turn that would follow the answer to a call of the tool name.
func stopAfter(name string) func(context.Context, *converse.TurnPlan) error {
	return func(_ context.Context, t *converse.TurnPlan) error {
		for _, call := range t.Answered {
			if call.Tool == name {
				t.Stop = true
			}
		}
		return nil
	}
}
