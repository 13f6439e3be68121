package mcptools

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of a [Server]'s limits.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultStartupTimeout = 30 * time.Second
	DefaultConcurrency    = 4
	// DefaultMaxResponse is eight times the executor's default output
	// limit of 1 MiB: room for the JSON of a result with images and
	// documents, which the output limit does not bound.
	DefaultMaxResponse = 8 << 20
)

// Server describes an MCP server and how its tools are offered. Exactly one
// of Command, URL and Transport says how to reach it.
type Server struct {
	// Name names the server; its tools are offered as Name__tool. It must
	// not be empty.
	Name string

	// Command is the program to run and its arguments, spoken to over
	// stdio. No shell is involved.
	Command []string
	// Env sets variables in the program's environment, beside the minimal
	// one of a tools.Command program, and wins over them.
	Env map[string]string
	// InheritEnv names more variables to pass from the current process.
	InheritEnv []string
	// Stderr receives the program's standard error; nil discards it.
	Stderr io.Writer

	// URL is the endpoint of a server spoken to over streamable HTTP.
	URL string
	// Headers are sent with every HTTP request, such as an Authorization.
	Headers map[string]string
	// HTTPClient makes the HTTP requests; nil means http.DefaultClient.
	// A copy of it is used, which refuses every redirect (its own
	// CheckRedirect is not called): streamable HTTP needs none, and the
	// server's credentials go to URL's origin only.
	HTTPClient *http.Client
	// OAuth, if set, authorizes the HTTP requests as the MCP authorization
	// specification says (OAuth 2.1). The SDK sends the access token of
	// its TokenSource with every request ("Authorization: Bearer"). On a
	// 401, or a 403 asking for more scope, it calls Authorize once, for a
	// new token, and sends the request once more. The SDK's
	// auth.AuthorizationCodeHandler (PKCE, with discovery of the
	// protected resource's and authorization server's metadata, and
	// dynamic client registration) and extauth.ClientCredentialsHandler
	// are two such handlers. Like Headers, the token goes to the origin of
	// URL only. An Authorize that fails fails the request, saying why.
	// (extauth's client credentials handler gets its later tokens with the
	// context of its Authorize, which ends with the request: give it one
	// that does not end, context.WithoutCancel, as cmd/converse does.)
	OAuth auth.OAuthHandler
	// MaxResponse bounds the bytes of the body of each HTTP response to a
	// request, such as a call's result; zero means DefaultMaxResponse. A
	// call whose response is longer fails (ErrToolFailed) as soon as the
	// limit is passed, before the result is decoded, and the connection is
	// made again. (Over stdio the SDK bounds each message to 16 MiB.)
	MaxResponse int

	// Transport, if set, returns a new SDK transport for each connection,
	// for transports other than the two above (in-memory ones, in tests).
	Transport func() mcp.Transport

	// Include, if not empty, names the server's tools to offer (by the
	// server's names); Exclude names tools not to offer.
	Include, Exclude []string
	// ApprovalPolicy, if set, is asked for each tool when it is listed:
	// true makes its calls need approval (tools.Options.RequireApproval),
	// such as for the tools whose annotations say they are destructive.
	ApprovalPolicy func(tool string, a Annotations) bool
	// TrustAnnotations says that the server is trusted to describe its
	// tools. The MCP specification has clients treat a server's tool
	// annotations as untrusted unless the server is. Without
	// TrustAnnotations, ApprovalPolicy and Bridge.Annotations get only the
	// protocol's most cautious hints (destructive, open-world, neither
	// read-only nor idempotent) and the title, whatever the server
	// declares. A server calling its deleting tool read-only then does not
	// get it run unasked.
	TrustAnnotations bool

	// Timeout bounds each call; zero means DefaultTimeout.
	Timeout time.Duration
	// StartupTimeout bounds the start of the server and its handshake; zero
	// means DefaultStartupTimeout.
	StartupTimeout time.Duration
	// Concurrency bounds the calls in flight to the server; zero means
	// DefaultConcurrency, 1 makes calls sequential.
	Concurrency int
	// Progress, if set, receives the server's progress notifications for
	// the calls of its tools (MCP's progress utility): each call is sent
	// with a progress token, which the server may report on. What a
	// server reports is untrusted text. Progress is called on the
	// connection's goroutine and must not block.
	Progress func(Progress)
}

// Progress is a server's progress notification for a call of one of its
// tools.
type Progress struct {
	Server string // the server's Name
	Tool   string // the server's name for the tool
	CallID string // the call's id (tools.CallID), if it had one
	// Progress is how far the call is, and Total how far it goes (0 when
	// the server does not know); Message says so in words.
	Progress, Total float64
	Message         string
}

// Annotations are the hints a server gives about a tool, with the
// protocol's defaults applied.
type Annotations struct {
	// Title is a human-readable title of the tool.
	Title string
	// ReadOnly reports that the tool does not change its environment.
	ReadOnly bool
	// Destructive reports that the tool may make destructive changes: true
	// unless the server says otherwise, false for a read-only tool.
	Destructive bool
	// Idempotent reports that calling the tool again with the same input
	// has no further effect.
	Idempotent bool
	// OpenWorld reports that the tool reaches beyond a closed domain (the
	// web, say): true unless the server says otherwise.
	OpenWorld bool
}

// annotations are a tool's annotations as the server is trusted to give
// them.
func (s Server) annotations(a *mcp.ToolAnnotations) Annotations {
	cautious := Annotations{Destructive: true, OpenWorld: true}
	switch {
	case a == nil:
		return cautious
	case !s.TrustAnnotations:
		cautious.Title = a.Title
		return cautious
	}
	return Annotations{
		Title:       a.Title,
		ReadOnly:    a.ReadOnlyHint,
		Destructive: !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint),
		Idempotent:  a.IdempotentHint,
		OpenWorld:   a.OpenWorldHint == nil || *a.OpenWorldHint,
	}
}

// Errors of calls, which the model reads as error results; Go callers test
// them with errors.Is.
var (
	// ErrUnavailable means the server could not be reached, could not start
	// or died during the call.
	ErrUnavailable = errors.New("server unavailable")
	// ErrToolFailed means the tool reported an error (isError) or the
	// server refused the call.
	ErrToolFailed = errors.New("tool failed")
	// ErrNotOffered means the server no longer offers the tool.
	ErrNotOffered = errors.New("tool no longer offered")
)

// Warnings of Connect and of refreshes, reported by [Bridge.Warnings].
var (
	// ErrSkipped means a tool is not offered: its schema was rejected, or
	// no name could be found for it.
	ErrSkipped = errors.New("mcptools: tool skipped")
	// ErrRenamed means a tool's name was taken and it got another.
	ErrRenamed = errors.New("mcptools: tool renamed")
)

// check checks a server's description and fills in its defaults.
func (s Server) check() (Server, error) {
	if strings.TrimSpace(s.Name) == "" {
		return s, errors.New("mcptools: a server without a name")
	}
	ways := 0
	for _, set := range []bool{len(s.Command) > 0, s.URL != "", s.Transport != nil} {
		if set {
			ways++
		}
	}
	if ways != 1 {
		return s, fmt.Errorf("mcptools: server %q: set exactly one of Command, URL and Transport", s.Name)
	}
	if s.OAuth != nil && s.URL == "" {
		return s, fmt.Errorf("mcptools: server %q: OAuth is for a URL", s.Name)
	}
	if len(s.Command) > 0 && s.Command[0] == "" {
		return s, fmt.Errorf("mcptools: server %q: empty command", s.Name)
	}
	for n, v := range s.Env {
		if n == "" || strings.ContainsAny(n, "=\x00") || strings.ContainsRune(v, 0) {
			return s, fmt.Errorf("mcptools: server %q: environment variable %q: names must be non-empty, without = or NUL, values without NUL", s.Name, n)
		}
	}
	if s.Timeout < 0 || s.StartupTimeout < 0 || s.Concurrency < 0 || s.MaxResponse < 0 {
		return s, fmt.Errorf("mcptools: server %q: negative timeout, concurrency or response limit", s.Name)
	}
	if s.URL != "" {
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, fmt.Errorf("mcptools: server %q: URL %q: want an http or https URL with a host", s.Name, s.URL)
		}
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.StartupTimeout == 0 {
		s.StartupTimeout = DefaultStartupTimeout
	}
	if s.Concurrency == 0 {
		s.Concurrency = DefaultConcurrency
	}
	if s.MaxResponse == 0 {
		s.MaxResponse = DefaultMaxResponse
	}
	return s, nil
}
