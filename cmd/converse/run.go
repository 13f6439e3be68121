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

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/modelinfo"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools"
)

// run is the whole command: main only adds the process's signals and exit
// status. Assistant text goes to stdout; diagnostics and the -v trace to
// stderr. A returned usageError means exit status 2, any other error 1.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	// What reaches a terminal is made visible; stderr is redacted first.
	tty := stderr // the chat's line editor writes cursor moves there
	stdout, stderr = onTerminal(stdout), redacting{onTerminal(stderr)}
	if isHelp(args) {
		return printHelp(stdout, args)
	}
	if isView(args) {
		return view(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "serve" {
		return serve(ctx, args[1:], stdout, stderr)
	}
	listing := len(args) > 0 && args[0] == "tools" // converse tools [flags]: -list-tools
	if listing {
		args = args[1:]
	}
	s, err := parseFlags(args, stdout, false)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	s.diagnostics = stderr
	s.listTools = s.listTools || listing
	if s.listTools && len(s.prompt) > 0 {
		return usagef("converse tools takes no prompt (got %q): it lists the tools and exits", strings.Join(s.prompt, " "))
	}
	flush, err := setupTelemetry(ctx, stderr)
	if err != nil {
		return err
	}
	defer func() { // after the calls are reaped, so their spans are ended
		if interrupted := flush(ctx); err == nil {
			err = interrupted
		}
	}()
	calls := &running{}
	// Even on an interrupt, no program of a tool outlives converse.
	defer calls.wait()
	fns := newFunctions(s, stderr)
	reg, err := registry(s, calls, fns)
	if err != nil {
		return err
	}
	progress := &progressRelay{}
	bridge, stopMCP, err := startMCP(ctx, s, reg, stderr, progress)
	if err != nil {
		return err
	}
	defer stopMCP()
	if err := s.checkStopAfterTool(reg); err != nil {
		return err
	}
	if s.listTools {
		return listTools(stdout, reg, toolOrigins(s, fns, bridge), s.json)
	}
	rec, err := loadReplay(s.replay)
	if err != nil {
		return err
	}
	prompt, interactive, err := readPrompt(s.prompt, stdin)
	resumeOnly := err != nil && isUsage(err) && s.session != "" && len(s.prompt) == 0
	if err != nil && !resumeOnly {
		return err
	}
	b, err := newBackend(ctx, s, rec)
	if err != nil {
		return err
	}
	defer b.close()
	fns.bedrock.set(b.client)
	// An empty recording now: a -record file that cannot be written is
	// found before the first (paid) model call, and some file is left
	// whatever happens next.
	if err := b.save(s.record); err != nil {
		return &usageError{err}
	}

	sess, err := newSession(ctx, s, rec, reg, b, stdin, stdout, stderr)
	if err != nil {
		return err
	}
	sess.print.status = newStatus(tty, s, os.Getenv("TERM"))
	progress.set(sess.print.progress)
	// A session's task left open is resumed first; a stopped one only
	// without a prompt: a prompt starts the next task at once.
	if s.session != "" && (resumeOnly || !sess.conv.State().Stopped) {
		resumed, err := sess.resume(ctx, stdin)
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
		sess.calls = calls
		sess.listTools = func(w io.Writer) error { return listTools(w, reg, toolOrigins(s, fns, bridge), false) }
		return sess.chat(ctx, stdin, tty)
	}
	sess.print.tracef("> %s\n", trace.Short(prompt))
	return sess.send(ctx, prompt)
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
	var first recording.Exchange
	if rec != nil && len(rec.Exchanges) > 0 {
		first = rec.Exchanges[0]
	}
	model := s.modelID(first.ModelID)
	stream := s.stream
	if !s.set["stream"] && first.Operation == recording.OpConverseStream {
		stream = true // replay the way it was recorded
	}
	// With -schema the answer is printed once validated, not as it arrives.
	p := &printer{stdout: stdout, stderr: stderr, noText: s.json || s.request.schema != nil}
	if s.verbose {
		p.trace = trace.New(stderr)
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
		o.Telemetry.RecordContent, o.Telemetry.AgentName = s.recordContent, s.agentName
		if s.session == "" {
			o.Telemetry.ConversationID = newConversationID() // -session's id is the session's
		}
		if p.trace != nil {
			o.Logger = slog.New(p.trace.Handler())
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
	if !modelinfo.KnownFamily(ss.model) {
		fmt.Fprintf(stderr, "converse: warning: model %s is of no family converse knows (Anthropic, Amazon, Meta, Mistral, Cohere, DeepSeek, Writer): "+
			"defaults apply (no toolResult status, tools while streaming, no known context window, prices or prompt caching); check -model\n", trace.Printable(ss.model))
	}
	if s.replay != "" {
		p.tracef("· model %s, replaying %s offline\n", trace.Printable(ss.model), s.replay)
	} else {
		p.tracef("· model %s in region %s\n", trace.Printable(ss.model), b.region)
		if s.endpoint != "" {
			p.tracef("· endpoint %s (-endpoint)\n", s.endpoint)
		}
		p.tracef("· auth: %s\n", b.auth)
	}
	traceNoEffect(p, s, ss.model)
	if st := conv.State(); s.session != "" && len(st.Messages) > 0 {
		p.tracef("· session %s loaded: %s with %s\n", s.session, plural(len(st.Messages), "message"), trace.Printable(st.ModelID))
	}
	if s.verbose {
		b.retried = traceRetries(p.trace)
	}
	return ss, nil
}

// traceNoEffect says in the -v trace what the flags do for model, when it
// is not what they say: -cache on a model without prompt caching, and how
// -schema's answer is given.
func traceNoEffect(p *printer, s *settings, model string) {
	if s.cache && !modelinfo.PromptCaching(model) {
		p.tracef("· -cache has no effect: %s has no prompt caching\n", trace.Printable(model))
	}
	switch {
	case s.request.schema == nil:
	case modelinfo.NativeStructuredOutput(model):
		p.tracef("· -schema: %s answers in the schema natively (outputConfig.textFormat)\n", trace.Printable(model))
	default:
		p.tracef("· -schema: %s has no native structured output: the answer is a call of a final tool, its input validated\n", trace.Printable(model))
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
	o.Budget = s.budget()
	o.SystemTools = s.systemTools
	o.FallbackModels = s.fallbacks
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
	ss.print.endText()
	if res != nil {
		ss.print.citations(res.Citations)
		ss.print.total(res)
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
