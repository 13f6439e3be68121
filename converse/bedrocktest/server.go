package bedrocktest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/httpbody"
	"github.com/tooluse/bedrock/converse/internal/wire"
	"github.com/tooluse/bedrock/converse/recording"
)

// Server is a Bedrock runtime endpoint on loopback that answers Converse and
// ConverseStream calls with a Handler. Point the real SDK client at it with
// Client, or with Config when building the client yourself.
type Server struct {
	// URL is the base URL of the server, of the form http://127.0.0.1:port.
	URL string

	handler Handler
	opts    Options
	srv     *httptest.Server
	http    *http.Client
	nextID  atomic.Int64
	cache   promptCache
	quotas  quotas

	mu   sync.Mutex
	reqs []*Request
}

// Options configures a Server. NewServer fills in the defaults, then calls
// each of its option functions on them, as the AWS SDK's constructors do.
type Options struct {
	// Lenient turns off the checks of Bedrock's request rules, so the
	// Handler sees every request that decodes, valid or not.
	Lenient bool

	// MaxRequestBytes, when positive, makes the server refuse a request body
	// of more than that many bytes, so that a test sees what an oversize
	// request gets. The answer is a 400 ValidationException "Input is too
	// long for requested model.", Bedrock's message for an input too large
	// for the model. Bedrock documents no byte limit of its own for Converse
	// (its limits are the model's context window, in tokens), so by default
	// the server has none.
	MaxRequestBytes int64

	// MaxInputTokens, when positive, is the model's context window: a
	// request of more input tokens (by EstimateTokens) gets Bedrock's 400
	// ValidationException "Input is too long for requested model.", from
	// Converse, ConverseStream and CountTokens alike.
	MaxInputTokens int

	// Accounting makes the server report its own count of each request's
	// input tokens (EstimateTokens) in the usage of the replies it encodes
	// (Output, not Raw or Events). The output tokens are left as the reply
	// has them.
	//
	// It simulates Bedrock's prompt cache too. The prefix up to a cache
	// point, without the cache points themselves, is written to the cache
	// for the point's TTL, if it has the model's minimum tokens or more. A
	// later request with the same prefix up to one of its points, within
	// the TTL, reads it. A read starts the TTL again. Usage then counts the
	// longest prefix read as CacheReadInputTokens. From there to the last
	// point counts as CacheWriteInputTokens. CacheDetails splits those by
	// TTL: up to the last point with the one-hour TTL, then the rest. The
	// rest of the input counts as InputTokens.
	Accounting bool

	// Now is the clock of the prompt cache's TTLs; nil means time.Now.
	Now func() time.Time

	// Quota, when set, is each model's quota of requests and tokens per
	// minute, by Now's clock: a call past it gets Bedrock's 429
	// ThrottlingException (Throttles counts them). See Quota.
	Quota Quota

	// MaxRequests is how many of the last requests the server keeps for
	// Requests: 1000 by default, none if 0, all of them if negative (which,
	// over a long run, holds every body in memory).
	MaxRequests int
}

// defaultMaxRequests is Options.MaxRequests unless an option changes it.
const defaultMaxRequests = 1000

// NewServer starts a Server answering with h. The caller must Close it.
func NewServer(h Handler, optFns ...func(*Options)) *Server {
	s := newServer(h, optFns)
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL

	transport := http.DefaultTransport.(*http.Transport).Clone()
	s.http = &http.Client{Transport: httpbody.Transport(transport)}
	return s
}

// newServer is a Server answering with h, its options set, not serving yet.
func newServer(h Handler, optFns []func(*Options)) *Server {
	s := &Server{handler: h, opts: Options{MaxRequests: defaultMaxRequests}}
	for _, fn := range optFns {
		fn(&s.opts)
	}
	s.cache.now = s.opts.Now
	if s.cache.now == nil {
		s.cache.now = time.Now
	}
	return s
}

// Close shuts the server down, waiting for calls in flight, and closes the
// idle connections of the clients it made.
func (s *Server) Close() {
	if s.srv != nil {
		s.srv.Close()
	}
	s.http.CloseIdleConnections()
}

// Requests returns the requests received so far, in order, including those
// rejected by validation: the last 1000 of them, or as many as
// Options.MaxRequests says. The slice is a copy; the Requests are shared.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// HTTPClient returns the HTTP client used by Client and Config. Its
// transport hides io.WriterTo on request bodies, which works around a trap
// of the SDK on loopback (see recording.PlainBodies); use it, or
// recording.PlainBodies, when you set Options.HTTPClient yourself:
//
//	client := bedrockruntime.NewFromConfig(cfg, func(o *bedrockruntime.Options) {
//		o.BaseEndpoint = aws.String(srv.URL)
//		o.HTTPClient = srv.HTTPClient()
//	})
func (s *Server) HTTPClient() *http.Client {
	return s.http
}

// Config returns an aws.Config aimed at the server: region us-east-1,
// static credentials, BaseEndpoint set to URL and the server's HTTP client.
// The retryer is left to the SDK's default.
func (s *Server) Config() aws.Config {
	return aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDBEDROCKTEST", "bedrocktest-secret", ""),
		HTTPClient:   s.http,
		BaseEndpoint: aws.String(s.URL),
	}
}

// Client returns a real bedrockruntime client talking to the server (see
// Config). Options such as a retryer are changed with optFns:
//
//	client := srv.Client(func(o *bedrockruntime.Options) {
//		o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 1)
//	})
func (s *Server) Client(optFns ...func(*bedrockruntime.Options)) *bedrockruntime.Client {
	return bedrockruntime.NewFromConfig(s.Config(), optFns...)
}

// ServeHTTP answers a Bedrock runtime request, as the server does on
// loopback. A Server is an http.Handler, for a transport that needs no
// socket: an http.RoundTripper calling it, say, for testing/synctest,
// whose bubbles hold no real network. A request whose context ends while
// the Handler runs gets no answer; such a transport should then return the
// context's error, as net/http's does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("bedrocktest-%d", s.nextID.Add(1)))
	if modelID, ok := wire.RouteCountTokens(r); ok {
		s.serveCountTokens(w, r, modelID)
		return
	}
	op, modelID, ok := wire.Route(r)
	if !ok {
		writeError(w, &Error{
			Status:  http.StatusNotFound,
			Type:    "UnknownOperationException",
			Message: fmt.Sprintf("bedrocktest: no operation at %s %s", r.Method, r.URL.Path),
		})
		return
	}
	body, tooLong, err := s.readBody(r.Body)
	if err != nil {
		return // the client is gone
	}
	req := &Request{Operation: op, ConverseInput: bedrockruntime.ConverseInput{ModelId: &modelID}, Body: body}
	if tooLong {
		s.keep(req)
		writeError(w, tooLongInput())
		return
	}
	in, decodeErr := wire.DecodeConverseInput(body)
	if decodeErr == nil {
		in.ModelId = req.ModelId
		req.ConverseInput = *in
	}
	if !s.admit(w, r, req, decodeErr) {
		return
	}
	charged, ok := s.quotas.admit(s.opts.Quota, req, s.cache.now())
	if !ok {
		writeError(w, Throttling())
		return
	}

	reply, err := s.handler.ServeConverse(r.Context(), req)
	if err != nil && r.Context().Err() != nil {
		// The client gave up: no answer, least of all a ValidationException
		// it would take for its own mistake. A transport calling ServeHTTP
		// returns the context's error, as net/http's does.
		s.quotas.settle(charged, &types.TokenUsage{})
		return
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = setupErrorf("handler error: %v", err)
		}
		s.quotas.settle(charged, &types.TokenUsage{})
		writeError(w, e)
		return
	}
	if reply == nil {
		s.quotas.settle(charged, &types.TokenUsage{})
		writeError(w, setupErrorf("handler returned a nil Reply"))
		return
	}
	reply = s.withUsage(req, reply)
	if reply.Output != nil {
		s.quotas.settle(charged, reply.Output.Usage)
	}
	if op == recording.OpConverse {
		s.writeConverse(w, r, reply)
		return
	}
	s.writeStream(w, r, reply)
}

// admit keeps req and checks it as Bedrock would before a model sees it.
// Some requests are answered here, and admit reports false: a body that
// did not decode, a request that breaks Bedrock's rules (unless Lenient)
// and one over the context window. A stream's request that the model
// rejects ("The model returned the following errors: ...") is answered as
// Bedrock answers it. That is after the stream's 200, in a
// validationException frame, as a captured ConverseStream of Nova Lite
// with bytes that are not an image shows.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, req *Request, decodeErr error) bool {
	s.keep(req)
	var e *Error
	switch {
	case decodeErr != nil:
		e = Validation("Malformed input request, please reformat your input and try again.")
	case !s.opts.Lenient:
		e = Validate(req)
	}
	if e == nil && s.overWindow(req) {
		e = tooLongInput()
	}
	switch {
	case e == nil:
		return true
	case req.Operation == recording.OpConverseStream && e.Type == "ValidationException" && strings.HasPrefix(e.Message, modelErrors):
		s.writeStream(w, r, &Reply{Events: []recording.Event{}, Exception: &Exception{Type: "validationException", Message: e.Message}})
	default:
		writeError(w, e)
	}
	return false
}

// readBody reads a request body. With a size limit, it reads no more than
// the limit and discards the rest. It still reads it all, so that the
// client gets the answer rather than a connection reset while it is still
// sending.
func (s *Server) readBody(body io.Reader) (b []byte, tooLong bool, err error) {
	if s.opts.MaxRequestBytes <= 0 {
		b, err = io.ReadAll(body)
		return b, false, err
	}
	b, err = io.ReadAll(io.LimitReader(body, s.opts.MaxRequestBytes+1))
	if err != nil || int64(len(b)) <= s.opts.MaxRequestBytes {
		return b, false, err
	}
	_, err = io.Copy(io.Discard, body)
	return nil, true, err
}

// keep adds req to the requests Requests returns, dropping the oldest past
// the limit.
func (s *Server) keep(req *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.MaxRequests < 0 {
		s.reqs = append(s.reqs, req)
		return
	}
	if s.opts.MaxRequests == 0 {
		return
	}
	if len(s.reqs) == s.opts.MaxRequests {
		// Shift in place: the backing array stays at the limit.
		copy(s.reqs, s.reqs[1:])
		s.reqs = s.reqs[:len(s.reqs)-1]
	}
	s.reqs = append(s.reqs, req)
}

// writeConverse answers a Converse call with reply, after its Latency
// unless the client leaves first.
func (s *Server) writeConverse(w http.ResponseWriter, r *http.Request, reply *Reply) {
	if !pause(r.Context(), reply.Latency) {
		return
	}
	var body []byte
	switch {
	case reply.Raw != nil:
		body = reply.Raw
	case reply.Output != nil:
		var err error
		if body, err = wire.EncodeConverseOutput(reply.Output); err != nil {
			writeError(w, setupErrorf("%v", err))
			return
		}
	default:
		writeError(w, setupErrorf("Reply to Converse has neither Output nor Raw"))
		return
	}
	w.Header().Set("Content-Type", wire.ContentTypeJSON)
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, bytes.NewReader(body))
}
