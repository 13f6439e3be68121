package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/trace"
)

// serveCommand is converse serve.
var serveCommand = &command{
	name:      "serve",
	usageLine: "converse serve [flags]",
	short:     "serve conversations over Amazon Bedrock AgentCore Runtime's HTTP contract (converse serve -h)",
	long:      serveLong,
	flags: func(s *settings, fs *flag.FlagSet) {
		s.conversationFlags(fs)
		s.serveFlags(fs)
	},
	refused: []refusal{
		{"session", "sessions are kept in -sessions, one for each runtime session id"},
		{"json", "answers are JSON already"},
		{"record", "it records the model calls of one run at the terminal; record a conversation with converse -record"},
		{"schema", "an invocation's answer is the conversation's text; ask for a -schema answer with converse -schema"},
	},
	checks: append(conversationChecks[:len(conversationChecks):len(conversationChecks)],
		(*settings).checkBucket, (*settings).checkNoPrompt, (*settings).checkServeLimits, (*settings).checkSessions),
	run: serve,
}

// serveFlags registers the flags of converse serve's server.
func (s *settings) serveFlags(fs *flag.FlagSet) {
	fs.StringVar(&s.addr, "addr", "127.0.0.1:8080", "listen on `HOST:PORT`; in AgentCore Runtime's container, 0.0.0.0:8080")
	fs.Int64Var(&s.maxBody, "max-body", agentcore.DefaultMaxBody, "refuse an invocation's body of more than `BYTES` with 413")
	fs.IntVar(&s.maxConcurrent, "max-concurrent", agentcore.DefaultMaxConcurrent, "run at most `N` invocations at once; refuse one more with 503 and Retry-After")
	fs.DurationVar(&s.shutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGTERM, let the running invocations finish for `DURATION`, then cut them off with 503")
	fs.BoolVar(&s.logJSON, "log-json", false, "write the record of each invocation to standard error as a JSON object, not a line of text")
	fs.StringVar(&s.sessions, "sessions", agentcore.DefaultSessionDir, "keep the sessions' conversations in `dir` (the runtime's session storage), or in the DynamoDB table of dynamodb://TABLE, an item a session id")
}

// checkNoPrompt rejects a prompt: serve's come in its invocations.
func (s *settings) checkNoPrompt() error {
	if len(s.prompt) > 0 {
		return usagef("serve takes no prompt: the prompts come in POST /invocations (got %q)", strings.Join(s.prompt, " "))
	}
	return nil
}

// checkServeLimits rejects bounds of the server that serve nothing.
func (s *settings) checkServeLimits() error {
	if s.maxBody <= 0 || s.maxConcurrent <= 0 {
		return usagef("-max-body and -max-concurrent want a number above 0")
	}
	if s.shutdownTimeout < 0 {
		return usagef("-shutdown-timeout %v: want a duration of 0 or more", s.shutdownTimeout)
	}
	return nil
}

// checkSessions rejects a DynamoDB -sessions that names no table, and a
// -session-bucket without one.
func (s *settings) checkSessions() error {
	table, dynamo := strings.CutPrefix(s.sessions, "dynamodb://")
	switch {
	case dynamo && (table == "" || strings.Contains(table, "/")):
		return usagef("-sessions %s: want dynamodb://TABLE (the runtime's session id names the item)", s.sessions)
	case s.sessionBucket != "" && !dynamo:
		return usagef("-session-bucket needs -sessions dynamodb://TABLE")
	}
	return nil
}

// serve is converse serve: the conversations of the flags' model and tools
// served over Amazon Bedrock AgentCore Runtime's HTTP protocol contract
// (package agentcore) on -addr, until ctx ends. Then it takes no more
// invocations and lets those running finish within -shutdown-timeout. It cuts
// off the rest (which answer 503) and returns once they have answered.
func serve(ctx context.Context, inv *invocation) error {
	s := inv.s
	return withTools(ctx, inv, nil, func(tb *toolbox) error {
		b, err := newBackend(ctx, s, tb.rec)
		if err != nil {
			return err
		}
		defer b.close()
		tb.fns.bedrock.set(b.client)
		model := s.modelID(firstExchange(tb.rec).ModelID)
		if err := s.checkPrices(model); err != nil {
			return err
		}
		store, err := servedStore(ctx, s)
		if err != nil {
			return err
		}
		if s.verbose {
			b.retried = traceRetries(trace.New(inv.stderr))
		}
		h := agentcore.New(b.client, model, tb.reg, s.handlerOptions(model, inv.stderr, store))
		return listen(ctx, s, h, model, inv.stderr)
	})
}

// handlerOptions are the options of serve's handler of the conversations
// of model, kept in store.
func (s *settings) handlerOptions(model string, stderr io.Writer, store converse.Store) func(*agentcore.Options) {
	return func(o *agentcore.Options) {
		o.Store = store
		o.Logger = invocationLogger(s, stderr)
		o.MaxBody, o.MaxConcurrent = s.maxBody, s.maxConcurrent
		o.Conversation = func(o *converse.Options) {
			s.conversationOptions(o, model)
			if s.stream {
				o.Stream = &converse.StreamPolicy{}
			}
			if s.verbose { // each session's lines say whose they are
				tr := trace.New(labelled{w: stderr, label: "[" + trace.Printable(o.Session.ID) + "] "})
				o.OnEvent, o.Logger = traceEvent(tr), slog.New(tr.Handler())
			}
			if s.yes {
				o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
					if call.Question != nil { // -yes answers no question: the caller does
						return converse.Decision{ID: call.ID, Verdict: converse.Paused}, nil
					}
					return call.Approve(), nil
				}
			} // else a call that needs approval pauses, and the caller decides
		}
	}
}

// listen serves h on -addr until ctx ends, then drains it.
func listen(ctx context.Context, s *settings, h *agentcore.Handler, model string, stderr io.Writer) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return usagef("-addr %s: %w", s.addr, err)
	}
	fmt.Fprintf(stderr, "converse: serving %s on http://%s (POST /invocations, GET /ping), sessions in %s\n", trace.Printable(model), ln.Addr(), s.sessions)
	if !loopback(ln.Addr()) {
		fmt.Fprintf(stderr, "converse: warning: %s is reachable beyond this machine, and serve authenticates no caller: listen there only behind AgentCore Runtime (or another proxy that authenticates)\n", ln.Addr())
	}
	srv := newHTTPServer(h)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		err := drain(srv, h, s.shutdownTimeout)
		<-served
		return err
	}
}

// drain stops srv: it takes no more connections, lets the running
// invocations of h finish within grace, then stops h, whose invocations
// still running answer 503, and returns once they have answered. The
// invocations' contexts are not ctx's, so a signal cuts none at once.
func drain(srv *http.Server, h *agentcore.Handler, grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		h.Stop()
		err = srv.Shutdown(context.Background())
	}
	return err
}

// newHTTPServer is the server of h, with the bounds that package agentcore's
// doc recommends. It cuts off a caller that sends its headers slowly, keeps an
// idle connection, or sends headers of more than 128 KiB. The runtime passes
// on up to 20 headers of 4 KB.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 128 << 10}
}

// invocationLogger is the logger of the invocations' records: text lines
// on stderr, or JSON objects with -log-json, with the Debug records too
// with -v (the body's ignored fields).
func invocationLogger(s *settings, stderr io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{}
	if s.verbose {
		opts.Level = slog.LevelDebug
	}
	if s.logJSON {
		return slog.New(slog.NewJSONHandler(stderr, opts))
	}
	return slog.New(slog.NewTextHandler(stderr, opts))
}

// loopback reports whether addr, a TCP listener's, takes connections from
// this machine only.
func loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// labelled writes each Write, one line of a trace, to w after label.
type labelled struct {
	w     io.Writer
	label string
}

func (l labelled) Write(p []byte) (int, error) {
	if _, err := io.WriteString(l.w, l.label+string(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// serveLong is what converse serve -h says before its flags.
const serveLong = `Serve serves conversations over the HTTP protocol contract of Amazon
Bedrock AgentCore Runtime: POST /invocations takes {"prompt": "..."} (or
{"decisions": [...]} for calls awaiting approval) and answers JSON, or
server-sent events with "stream": true or Accept: text/event-stream; GET
/ping answers {"status": "Healthy"} or "HealthyBusy". The header
X-Amzn-Bedrock-AgentCore-Runtime-Session-Id picks the conversation, kept in
-sessions, so the next invocation of a session continues it: a directory
(default the runtime's session storage), or -sessions dynamodb://TABLE, an
item of the DynamoDB table a session, keyed by the session id, for
sessions that outlive the runtime's (converse help session: the item, the
table, -session-bucket for sessions past 400 KB, the IAM actions). The other
flags are those of a conversation (-model, -endpoint, -tools, -mcp, -yes,
...); without -yes a call that needs approval pauses its invocation, whose
answer lists it. An invocation that reaches -max-turns or a budget answers
200 with "status": "limit", the text and usage so far; the next one of the
session goes on. With -v each invocation's trace (that of converse -v:
turns, tool calls, approvals, resumes) goes to standard error, each line
after [SESSION-ID], and so does each retry of a model call, without one.

Serve has no authentication of its own: anyone who reaches -addr can
invoke the model and the tools. It listens on loopback by default; inside
AgentCore Runtime's container, which authenticates the callers in front of
it (IAM SigV4 or a JWT authorizer), give -addr 0.0.0.0:8080, as the
runtime's contract asks. Listening beyond loopback, serve warns.

An invocation's body may be up to -max-body bytes, and -max-concurrent
invocations run at once: one more is refused with 503 and Retry-After. A
body not read within 10s is refused with 408; headers must come within
10s and hold at most 128 KiB, and an idle connection is closed after 2m.
Each invocation writes one record to standard error: its session, HTTP
status, duration, turns, tokens, cost and, for a failure, the error's
class and message; -log-json writes it as JSON.

On SIGTERM (or an interrupt) serve takes no more invocations and lets
those running finish within -shutdown-timeout; then it cuts off the rest,
which answer 503 with Retry-After saying the server is stopping, and
exits once their tools' programs are gone. A session cut off keeps its
completed steps: its next invocation resumes it. The prompt of one word
"serve" goes after --: converse -- serve.
`
