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
	"time"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/converse/trace"
)

// serve is converse serve: the conversations of the flags' model and tools
// served over Amazon Bedrock AgentCore Runtime's HTTP protocol contract
// (package agentcore) on -addr, until ctx ends: then it takes no more
// invocations, lets those running finish within -shutdown-timeout, cuts off
// the rest (which answer 503) and returns once they have answered.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	s, err := parseFlags(args, stdout, true)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	s.diagnostics = stderr
	flush, err := setupTelemetry(ctx, stderr)
	if err != nil {
		return err
	}
	defer func() {
		if interrupted := flush(ctx); err == nil {
			err = interrupted
		}
	}()
	calls := &running{}
	defer calls.wait()
	fns := newFunctions(s, stderr)
	reg, err := registry(s, calls, fns)
	if err != nil {
		return err
	}
	bridge, stopMCP, err := startMCP(ctx, s, reg, stderr, nil)
	if err != nil {
		return err
	}
	defer stopMCP()
	if err := s.checkStopAfterTool(reg); err != nil {
		return err
	}
	if s.listTools { // the tools each invocation would be offered
		return listTools(stdout, reg, toolOrigins(s, fns, bridge), false)
	}
	rec, err := loadReplay(s.replay)
	if err != nil {
		return err
	}
	b, err := newBackend(ctx, s, rec)
	if err != nil {
		return err
	}
	defer b.close()
	var first recording.Exchange
	if rec != nil && len(rec.Exchanges) > 0 {
		first = rec.Exchanges[0]
	}
	model := s.modelID(first.ModelID)
	if err := s.checkPrices(model); err != nil {
		return err
	}
	store, err := servedStore(ctx, s)
	if err != nil {
		return err
	}
	if s.verbose {
		b.retried = traceRetries(trace.New(stderr))
	}
	h := agentcore.New(b.client, model, reg, func(o *agentcore.Options) {
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
				o.OnEvent, o.Logger = tr.Event, slog.New(tr.Handler())
			}
			if s.yes {
				o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
					if call.Question != nil { // -yes answers no question: the caller does
						return converse.Decision{ID: call.ID, Verdict: converse.Paused}, nil
					}
					return converse.Approve(call.ID), nil
				}
			} // else a call that needs approval pauses, and the caller decides
		}
	})
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

// newHTTPServer is the server of h, with the bounds that package
// agentcore's doc recommends: a caller that sends its headers slowly, or
// keeps an idle connection, or sends headers of more than 128 KiB (the
// runtime passes on up to 20 headers of 4 KB), is cut off.
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

func printServeUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `usage: converse serve [flags]

Serve serves conversations over the HTTP protocol contract of Amazon
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

Flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
}
