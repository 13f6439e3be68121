package agentcore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools"
)

// SessionHeader is the header naming the session of an invocation, which
// the runtime sends with each one and a Handler sends back.
const SessionHeader = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"

// DefaultSessionDir is the directory of the default Store, a
// filestore.Store: a directory of /mnt/data, the developer guide's
// example mount path of a runtime's session storage (its
// filesystemConfigurations' sessionStorage.mountPath, which must be under
// /mnt). Without session storage the directory is in the microVM's own
// file system, which lasts as long as the session's microVM.
const DefaultSessionDir = "/mnt/data/converse"

// DefaultMaxBody is the default of Options.MaxBody: 1 MiB, room for a
// prompt that fills the largest context window.
const DefaultMaxBody = 1 << 20

// DefaultBodyTimeout is the default of Options.BodyTimeout.
const DefaultBodyTimeout = 10 * time.Second

// DefaultMaxConcurrent is the default of Options.MaxConcurrent.
const DefaultMaxConcurrent = 16

// Options configure a Handler.
type Options struct {
	// Store keeps the sessions' conversations; nil means a
	// filestore.Store in DefaultSessionDir. A dynamostore.Store keeps
	// them beyond the runtime's session storage.
	Store converse.Store
	// Conversation configures the conversation of each session, as an
	// option function of converse.New does: its request template,
	// MaxTurns, Approver, Stream and so on. It is called with Session
	// already set to Store and the invocation's session id. That id is the
	// runtime's, even where the Store's key is its hash. It lets the
	// function tell the sessions apart (to label their logs, say). The
	// Handler sets Session again after it. For a stream, the Handler sets
	// Stream and adds its own OnEvent after the one set here.
	Conversation func(*converse.Options)
	// MaxBody bounds the body of an invocation, in bytes; 0 means
	// DefaultMaxBody. InvokeAgentRuntime takes payloads of up to 100 MB.
	MaxBody int64
	// BodyTimeout bounds the time to read an invocation's body, so that a
	// caller trickling it holds no slot for long: past it the invocation is
	// refused with 408. 0 means DefaultBodyTimeout. It needs an
	// http.ResponseWriter that can set read deadlines, as net/http's can.
	BodyTimeout time.Duration
	// MaxConcurrent bounds the invocations running at once, body reading
	// included; one more is refused with 503 and Retry-After. 0 means
	// DefaultMaxConcurrent.
	MaxConcurrent int
	// Logger gets one record per invocation (see the package doc, Logs);
	// nil means slog.Default().
	Logger *slog.Logger
}

// Handler is an http.Handler serving the conversations of one model and
// tool registry over AgentCore Runtime's HTTP protocol contract: POST
// /invocations and GET /ping (see the package doc). Its methods are safe
// for concurrent use.
type Handler struct {
	client converse.Client
	model  string
	reg    *tools.Registry
	opts   Options
	store  converse.Store // opts.Store, its failures marked (see markStore)
	mux    *http.ServeMux
	slots  chan struct{} // one for each invocation running, up to MaxConcurrent

	mu       sync.Mutex                         // guards what follows, never held across a conversation
	running  map[string]context.CancelCauseFunc // the sessions with an invocation running, and how to cancel it
	changed  time.Time                          // when the ping status last changed
	stopping bool                               // Stop was called
}

// errStopping is the cause of the invocations that Stop cancels, and the
// error of those it refuses.
var errStopping = errors.New("agentcore: the server is stopping: invoke again (the session goes on from its last completed step)")

// New returns a Handler whose sessions talk to modelID through client with
// the tools of reg; a restored session talks to the model it was started
// with.
func New(client converse.Client, modelID string, reg *tools.Registry, optFns ...func(*Options)) *Handler {
	h := &Handler{client: client, model: modelID, reg: reg, running: map[string]context.CancelCauseFunc{}, changed: time.Now()}
	for _, f := range optFns {
		f(&h.opts)
	}
	if h.opts.Store == nil {
		h.opts.Store = filestore.Store{Dir: DefaultSessionDir}
	}
	if h.opts.MaxBody <= 0 {
		h.opts.MaxBody = DefaultMaxBody
	}
	if h.opts.BodyTimeout <= 0 {
		h.opts.BodyTimeout = DefaultBodyTimeout
	}
	if h.opts.MaxConcurrent <= 0 {
		h.opts.MaxConcurrent = DefaultMaxConcurrent
	}
	h.slots = make(chan struct{}, h.opts.MaxConcurrent)
	if h.opts.Logger == nil {
		h.opts.Logger = slog.Default()
	}
	h.store = markStore(h.opts.Store)
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("GET /ping", h.ping)
	h.mux.HandleFunc("POST /invocations", h.invoke)
	return h
}

// ServeHTTP answers GET /ping and POST /invocations; other paths are 404,
// other methods 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// pingAnswer is the body of GET /ping.
type pingAnswer struct {
	Status           string `json:"status"`
	TimeOfLastUpdate int64  `json:"time_of_last_update"`
}

func (h *Handler) ping(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	busy, changed := len(h.running) > 0, h.changed
	h.mu.Unlock()
	a := pingAnswer{Status: "Healthy", TimeOfLastUpdate: changed.Unix()}
	if busy {
		a.Status = "HealthyBusy"
	}
	writeJSON(w, http.StatusOK, a)
}

// Stop cancels the invocations running, which answer 503 with Retry-After
// saying that the server is stopping, and refuses those that come after
// it alike. A conversation cut off keeps its completed steps: it is
// interrupted, and the session's next invocation, on this server or
// another, goes on from there. Stop does not wait for the answers: an
// http.Server's Shutdown does. A server shutting down calls it once the
// invocations have had their grace period.
func (h *Handler) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopping = true
	for _, cancel := range h.running {
		cancel(errStopping)
	}
}

// start marks the session running, with cancel to stop its invocation,
// unless it already is or the Handler is stopping.
func (h *Handler) start(id string, cancel context.CancelCauseFunc) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopping {
		return errStopping
	}
	if h.running[id] != nil {
		return fmt.Errorf("agentcore: session %q is running an invocation: wait for its answer", id)
	}
	if len(h.running) == 0 {
		h.changed = time.Now()
	}
	h.running[id] = cancel
	return nil
}

func (h *Handler) end(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.running, id)
	if len(h.running) == 0 {
		h.changed = time.Now()
	}
}

func (h *Handler) invoke(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get(SessionHeader)
	if id == "" {
		id = newSessionID()
	}
	w.Header().Set(SessionHeader, id)
	a := &answer{w: w, id: id}
	defer func() { h.log(r.Context(), a, time.Since(start)) }()
	if err := checkSessionID(id); err != nil {
		a.fail(http.StatusBadRequest, err)
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		a.fail(http.StatusServiceUnavailable, fmt.Errorf("agentcore: %d invocations are running, the most this server takes at once: try again later", h.opts.MaxConcurrent))
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout)) // unsupported: no deadline
	inv, ignored, status, err := readInvocation(w, r, h.opts.MaxBody)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		status, err = http.StatusRequestTimeout, fmt.Errorf("agentcore: the body did not arrive within %v", h.opts.BodyTimeout)
	}
	if err == nil { // net/http reads on, to see the caller go away; after a failure, the deadline keeps it from reading the rest
		_ = rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		a.fail(status, err)
		return
	}
	if len(ignored) > 0 {
		h.opts.Logger.DebugContext(r.Context(), "agentcore: the body's fields ignored", "session", trace.Printable(id), "fields", trace.Printable(strings.Join(ignored, ", ")))
	}
	a.stream = inv.Stream || acceptsStream(r)
	ctx, cancel := context.WithCancelCause(r.Context()) // ends when the caller goes away, or with Stop
	defer cancel(nil)
	if err := h.start(id, cancel); err != nil {
		a.fail(refused(err, http.StatusConflict), err)
		return
	}
	defer h.end(id)
	conv, err := h.open(ctx, id, a)
	if err != nil {
		err = stopped(ctx, err)
		a.fail(refused(err, http.StatusInternalServerError), err)
		return
	}
	last, resumed := h.run(ctx, conv, inv)
	last.err = stopped(ctx, last.err)
	a.finish(conv, last, resumed)
}

// stopped is err, that of an invocation with the context ctx, marked as a
// stop of the Handler's if Stop cancelled ctx.
func stopped(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errStopping) {
		return fmt.Errorf("%w (%w)", errStopping, err)
	}
	return err
}

// refused is the HTTP status of an invocation refused with err before its
// conversation ran: 503 for a Handler stopping, else otherwise.
func refused(err error, otherwise int) int {
	if errors.Is(err, errStopping) {
		return http.StatusServiceUnavailable
	}
	return otherwise
}

// log writes the record of an invocation that a answered: Info for a 2xx,
// Warn for a 4xx, Error for a 5xx. Its session and error pass through
// trace.Printable, as both may hold what a caller sent.
func (h *Handler) log(ctx context.Context, a *answer, took time.Duration) {
	level := slog.LevelInfo
	switch {
	case a.code >= 500:
		level = slog.LevelError
	case a.code >= 400:
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("session", trace.Printable(a.id)),
		slog.Int("code", a.code),
		slog.String("status", a.reply.Status),
		slog.Duration("duration", took),
	}
	if r := a.reply; r.Usage != nil {
		attrs = append(attrs, slog.Int("turns", r.Turns), slog.Int("inputTokens", r.Usage.InputTokens), slog.Int("outputTokens", r.Usage.OutputTokens))
	}
	if a.reply.CostUSD != nil {
		attrs = append(attrs, slog.Float64("costUSD", *a.reply.CostUSD))
	}
	if a.err != nil {
		attrs = append(attrs, slog.String("errorClass", a.class), slog.String("error", trace.Printable(a.err.Error())))
	}
	h.opts.Logger.LogAttrs(ctx, level, "agentcore: invocation", attrs...)
}

// open loads the session's conversation, or starts it.
func (h *Handler) open(ctx context.Context, id string, a *answer) (*converse.Conversation, error) {
	key := storeKey(id)
	opts := func(o *converse.Options) {
		if h.opts.Conversation != nil {
			o.Session = &converse.Session{Store: h.opts.Store, ID: id} // the hook's to read
			h.opts.Conversation(o)
		}
		o.Session = &converse.Session{Store: h.store, ID: key}
		if a.stream {
			o.Stream = &converse.StreamPolicy{}
			theirs := o.OnEvent
			o.OnEvent = func(ev converse.Event) {
				if theirs != nil {
					theirs(ev)
				}
				a.event(ev)
			}
		}
	}
	st, err := h.store.Load(ctx, key)
	if errors.Is(err, fs.ErrNotExist) {
		return converse.New(h.client, h.model, h.reg, opts), nil
	}
	if err != nil {
		return nil, fmt.Errorf("agentcore: session %q: %w", id, err)
	}
	conv, err := converse.Restore(h.client, h.reg, st, opts)
	if err != nil {
		return nil, fmt.Errorf("agentcore: session %q: %w", id, err)
	}
	return conv, nil
}

// run sends the prompt or resumes with the decisions. A prompt for a
// conversation interrupted (by a failure, a limit, a caller that went away)
// resumes it first: resumed is that Resume, and the prompt is sent only if
// it ended with an answer. last is the Send or Resume that ran last.
func (h *Handler) run(ctx context.Context, conv *converse.Conversation, inv *invocation) (last, resumed *ended) {
	if len(inv.Decisions) > 0 {
		res, err := conv.Resume(ctx, inv.decisions()...)
		return &ended{res, err}, nil
	}
	res, err := conv.Send(ctx, inv.Prompt)
	if !errors.Is(err, converse.ErrInterrupted) {
		return &ended{res, err}, nil
	}
	res, err = conv.Resume(ctx)
	resumed = &ended{res, err}
	if err != nil {
		return resumed, resumed
	}
	res, err = conv.Send(ctx, inv.Prompt)
	return &ended{res, err}, resumed
}

// newSessionID names the session of an invocation without one: 40
// characters, as the runtime wants at least 33.
func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "session-" + hex.EncodeToString(b)
}

// maxKeyLen is the longest session id that is its own key in the Store: a
// filestore.Store names a temporary file of a session ".ID.tmp-" and up to
// 10 digits, and a file name may be 255 bytes long.
const maxKeyLen = 200

// storeKey is the Store's key of the session id: the id itself, or for one
// longer than maxKeyLen (the runtime's ids go up to 256 characters)
// "sha256-" and the id's SHA-256 in hex.
func storeKey(id string) string {
	if len(id) <= maxKeyLen {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// checkSessionID accepts ids that are plain file names in any Store: up to
// 256 bytes of letters, digits, '.', '_' and '-', not starting with '.'.
func checkSessionID(id string) error {
	ok := len(id) <= 256 && id[0] != '.'
	for _, c := range []byte(id) {
		ok = ok && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
	}
	if !ok {
		return fmt.Errorf("agentcore: header %s: want up to 256 letters, digits, '.', '_' or '-', not starting with '.'", SessionHeader)
	}
	return nil
}

// storeError is a failure of the Store. An invocation that fails with one is
// a 500 even when it wraps an AWS API error (a DynamoDB or S3 error of a
// dynamostore.Store), which would otherwise pass for Bedrock's.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// markedStore is a Store whose errors are storeErrors.
type markedStore struct{ converse.Store }

func (s markedStore) Load(ctx context.Context, id string) (*converse.State, error) {
	st, err := s.Store.Load(ctx, id)
	if err != nil {
		return nil, &storeError{err}
	}
	return st, nil
}

func (s markedStore) Save(ctx context.Context, id string, st *converse.State) error {
	if err := s.Store.Save(ctx, id, st); err != nil {
		return &storeError{err}
	}
	return nil
}

// markStore returns s with its errors marked as the Store's, and its Hold
// kept if it is a converse.Holder.
func markStore(s converse.Store) converse.Store {
	if h, ok := s.(converse.Holder); ok {
		return markedHolder{markedStore{s}, h}
	}
	return markedStore{s}
}

// markedHolder is a markedStore of a Holder, whose Hold errors are
// storeErrors too.
type markedHolder struct {
	markedStore
	h converse.Holder
}

func (s markedHolder) Hold(ctx context.Context, id string, st *converse.State) (func(), error) {
	release, err := s.h.Hold(ctx, id, st)
	if err != nil {
		return nil, &storeError{err}
	}
	return release, nil
}
