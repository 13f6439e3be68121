package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/internal/modelerr"
)

// codeRejected is the code of the SDK's jsonrpc2.ErrRejected, "rejected by
// transport", an error of the transport and not of the server.
const codeRejected = -32005

const (
	firstBackoff = time.Second
	maxBackoff   = time.Minute
	// terminateAfter is how long Close waits for a server process to exit
	// once its standard input is closed, and again after SIGTERM.
	terminateAfter = 2 * time.Second
)

// conn is the connection to one server: a session, made again when the
// server dies, and the slots of the calls in flight.
type conn struct {
	cfg    Server
	client *mcp.Client
	slots  chan struct{} // a token per call in flight
	// inFlight are the calls sent with a progress token, by token, while
	// they run (with Server.Progress); tokens numbers them.
	inFlight sync.Map
	tokens   atomic.Int64
	lock     chan struct{} // held while the session is read or made; a channel, so that waiting ends with ctx
	watches  sync.WaitGroup
	// refreshing is held while the tools are listed again.
	refreshing sync.Mutex
	asking     askings // the calls in flight, for the server's questions

	// guarded by lock
	session  *mcp.ClientSession
	closed   bool
	failures int       // failed connections in a row
	retryAt  time.Time // no attempt before
	lastErr  error
}

func newConn(cfg Server, onListChanged func()) *conn {
	c := &conn{cfg: cfg, slots: make(chan struct{}, cfg.Concurrency), lock: make(chan struct{}, 1)}
	opts := &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { onListChanged() },
		// A server's question pauses the call (see asked and elicited):
		// the SDK must not answer it, so its automatic retry is off, and
		// the client says it takes form elicitations. It offers no roots
		// (the SDK's default capability), as it has none to list.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
	}
	opts.ElicitationHandler = c.elicited
	if cfg.Progress != nil {
		opts.ProgressNotificationHandler = c.progressed
	}
	c.client = mcp.NewClient(&mcp.Implementation{Name: "converse", Version: "1"}, opts)
	return c
}

// progressed hands a progress notification for a call in flight to
// Server.Progress; one for no such call is dropped.
func (c *conn) progressed(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	token, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	v, ok := c.inFlight.Load(token)
	if !ok {
		return
	}
	p := v.(Progress)
	p.Progress, p.Total, p.Message = req.Params.Progress, req.Params.Total, req.Params.Message
	c.cfg.Progress(p)
}

// acquire takes the lock, or fails when ctx ends first.
func (c *conn) acquire(ctx context.Context) error {
	select {
	case c.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return c.ended(ctx, "waiting for the connection")
	}
}

func (c *conn) release() { <-c.lock }

// current returns the session, connecting if there is none. A failed
// connection is retried after a back-off; calls before then fail at once.
func (c *conn) current(ctx context.Context) (*mcp.ClientSession, error) {
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	defer c.release()
	switch {
	case c.closed:
		return nil, modelerr.Errorf(ErrUnavailable, "the MCP server %q has been shut down", c.cfg.Name)
	case c.session != nil:
		return c.session, nil
	case time.Now().Before(c.retryAt):
		return nil, modelerr.Errorf(ErrUnavailable, "the MCP server %q is unavailable (%v); it is tried again in %v",
			c.cfg.Name, c.lastErr, time.Until(c.retryAt).Round(time.Second))
	}
	cs, err := c.connect(ctx)
	if err != nil && ctx.Err() != nil { // the caller's end, no failure of the server
		return nil, c.ended(ctx, "while the server started")
	}
	if err != nil {
		c.failures++
		c.retryAt = time.Now().Add(c.backoff())
		c.lastErr = err
		return nil, modelerr.Errorf(errors.Join(ErrUnavailable, err), "the MCP server %q could not be started: %v", c.cfg.Name, err)
	}
	c.failures, c.session = 0, cs
	c.watches.Add(1)
	go c.watch(cs)
	return cs, nil
}

// backoff is the wait before the next attempt to connect: a second after
// the first failure, doubling with each, up to a minute.
func (c *conn) backoff() time.Duration {
	if c.failures > 7 { // 2^6 s is past the cap already; a larger shift overflows
		return maxBackoff
	}
	return min(firstBackoff<<(c.failures-1), maxBackoff)
}

// connect starts or reaches the server and makes the handshake, within the
// startup timeout.
func (c *conn) connect(parent context.Context) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(parent, c.cfg.StartupTimeout)
	defer cancel()
	ctx, ex := watched(ctx)
	tr := c.transport()
	ct, isCommand := tr.(*commandTransport)
	var heard *hearing
	if isCommand {
		heard = &hearing{commandTransport: ct}
		tr = heard
	}
	cs, err := c.client.Connect(ctx, tr, nil)
	switch {
	case err == nil:
		return cs, nil
	case parent.Err() != nil:
		return nil, parent.Err()
	case ctx.Err() != nil:
		return nil, fmt.Errorf("no answer within %v", c.cfg.StartupTimeout)
	case errors.Is(err, exec.ErrNotFound):
		return nil, fmt.Errorf("the program %q was not found", c.cfg.Command[0])
	}
	if why, _ := ex.failure(); why != "" {
		return nil, errors.New(why)
	}
	if isCommand {
		if why := heard.failure(); why != "" {
			return nil, errors.New(why)
		}
	}
	return nil, err
}

func (c *conn) transport() mcp.Transport {
	switch {
	case c.cfg.Transport != nil:
		return c.cfg.Transport()
	case c.cfg.URL != "":
		client := http.DefaultClient
		if c.cfg.HTTPClient != nil {
			client = c.cfg.HTTPClient
		}
		u, _ := url.Parse(c.cfg.URL) // checked by Server.check
		bounded := *client           // a copy: the caller's client stays as it is
		bounded.CheckRedirect = refuseRedirect(c.cfg.Name)
		bounded.Transport = httpTransport{origin: origin(u), headers: c.cfg.Headers, limit: int64(c.cfg.MaxResponse), next: client.Transport}
		var oauth auth.OAuthHandler // a nil interface unless set: the SDK tests it
		if c.cfg.OAuth != nil {
			oauth = noticedAuth{c.cfg.OAuth}
		}
		return &mcp.StreamableClientTransport{Endpoint: c.cfg.URL, HTTPClient: &bounded, OAuthHandler: oauth,
			// Events of the stream the server sends notifications on; the
			// answers' bodies are bounded by bounded's transport.
			MaxEventSize: max(c.cfg.MaxResponse, mcp.DefaultMaxEventSize)}
	}
	// The session outlives the call that starts it: no CommandContext.
	cmd := exec.Command(c.cfg.Command[0], c.cfg.Command[1:]...)
	cmd.Env = tools.MinimalEnv(c.cfg.Env, c.cfg.InheritEnv)
	cmd.Stderr = c.cfg.Stderr
	cmd.WaitDelay = terminateAfter // a child holding standard error does not hang Close
	return &commandTransport{mcp.CommandTransport{Command: cmd, TerminateDuration: terminateAfter}}
}

// watch forgets a session when its connection ends, so that the next call
// makes another.
func (c *conn) watch(cs *mcp.ClientSession) {
	defer c.watches.Done()
	_ = cs.Wait()
	c.drop(cs)
}

// drop closes cs, which reaps a server process, and forgets it if it is the
// current session.
func (c *conn) drop(cs *mcp.ClientSession) {
	_ = cs.Close()
	c.lock <- struct{}{}
	if c.session == cs {
		c.session = nil
	}
	c.release()
}

// close stops the server for good.
func (c *conn) close() {
	c.lock <- struct{}{}
	c.closed = true
	cs := c.session
	c.session = nil
	c.release()
	if cs != nil {
		_ = cs.Close()
	}
	c.watches.Wait()
}

// list lists the server's tools through every page, within the startup
// timeout once connected.
func (c *conn) list(ctx context.Context) ([]*mcp.Tool, error) {
	cs, err := c.current(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartupTimeout)
	defer cancel()
	ctx, ex := watched(ctx)
	var list []*mcp.Tool
	for t, err := range cs.Tools(ctx, &mcp.ListToolsParams{Meta: traceMeta(ctx)}) {
		if err != nil {
			return nil, c.failed(ctx, cs, ex, err)
		}
		list = append(list, t)
	}
	return list, nil
}

// call calls the server's tool, within the call timeout and a slot.
func (c *conn) call(ctx context.Context, tool string, input json.RawMessage) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	case <-ctx.Done():
		return nil, c.ended(ctx, "waiting for a free slot")
	}
	cs, err := c.current(ctx)
	if err != nil {
		return nil, err
	}
	ctx, ex := watched(ctx)
	params := &mcp.CallToolParams{Meta: traceMeta(ctx), Name: tool, Arguments: input}
	if c.cfg.Progress != nil {
		id := tools.CallID(ctx)
		token := fmt.Sprintf("%s#%d", id, c.tokens.Add(1))
		c.inFlight.Store(token, Progress{Server: c.cfg.Name, Tool: tool, CallID: id})
		defer c.inFlight.Delete(token)
		params.SetProgressToken(token)
	}
	a := &asking{}
	if ans, ok := tools.AnswerOf(ctx); ok {
		if err := answered(params, a, ans); err != nil {
			return nil, err
		}
	}
	c.asking.add(a)
	res, err := cs.CallTool(ctx, params)
	c.asking.remove(a)
	if err := a.asked(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, c.failed(ctx, cs, ex, err)
	}
	if res.NeedsInput() {
		return nil, asked(c.cfg.Name, res)
	}
	return result(res)
}

// failed words a failed request. An error the server answered leaves the
// session as it is; a broken connection is dropped, to be made again. What
// ex saw on the wire says what happened better than the SDK, whose error
// for an HTTP status or a cut connection is "rejected by transport".
func (c *conn) failed(ctx context.Context, cs *mcp.ClientSession, ex *exchange, err error) error {
	var rpc *jsonrpc.Error
	why, kind := ex.failure()
	switch {
	case ctx.Err() != nil:
		return c.ended(ctx, "")
	case kind != ErrToolFailed && errors.As(err, &rpc) && rpc.Code != codeRejected: // with an HTTP status or not
		return modelerr.Errorf(errors.Join(ErrToolFailed, err), "the MCP server %q refused the call: %s", c.cfg.Name, rpc.Message)
	}
	c.drop(cs)
	if why != "" {
		return modelerr.Errorf(errors.Join(kind, err), "the call to the MCP server %q failed: %s; it is reconnected on the next call", c.cfg.Name, why)
	}
	why = err.Error()
	if _, after, ok := strings.Cut(why, `"tools/call": `); ok { // the SDK's prefix, which only says what we asked
		why = after
	}
	return modelerr.Errorf(errors.Join(ErrUnavailable, err), "the MCP server %q broke off the call (%s); it is reconnected on the next call", c.cfg.Name, why)
}

// ended words the end of a call's context.
func (c *conn) ended(ctx context.Context, while string) error {
	if while != "" {
		while = " " + while
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return modelerr.Errorf(ctx.Err(), "the call to the MCP server %q timed out%s", c.cfg.Name, while)
	}
	return modelerr.Errorf(ctx.Err(), "the call to the MCP server %q was cancelled%s", c.cfg.Name, while)
}

// hearing is a command server's transport that notes what the server sent. It
// tells a server that exited before it answered the handshake from one whose
// answer could not be read. The latter then exits as its input is closed.
type hearing struct {
	*commandTransport
	answered   atomic.Bool
	mu         sync.Mutex
	unreadable error // the first message that could not be read
}

// Connect starts the server and connects to it.
func (h *hearing) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := h.commandTransport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return heardConn{Connection: conn, h: h}, nil
}

// failure says why the handshake failed, if what the server sent or its
// exit says it; "" otherwise.
func (h *hearing) failure() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.unreadable != nil:
		return fmt.Sprintf("the server's answer was not valid JSON-RPC (%v)", h.unreadable)
	case h.answered.Load():
		return ""
	}
	if status := h.exitedEarly(); status != "" {
		return fmt.Sprintf("the server process exited before it answered (%s)", status)
	}
	return ""
}

type heardConn struct {
	mcp.Connection
	h *hearing
}

func (c heardConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	switch {
	case err == nil:
		c.h.answered.Store(true)
	case !ended(err) && ctx.Err() == nil:
		c.h.mu.Lock()
		if c.h.unreadable == nil {
			c.h.unreadable = err
		}
		c.h.mu.Unlock()
	}
	return msg, err
}

// ended reports whether a read failed because the server's output ended
// (it exited, and its pipe was closed), not because what it sent could not
// be read.
func ended(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe)
}
