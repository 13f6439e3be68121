package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// mcpConfig is the JSON file of the -mcp flag, in the format of Claude
// Desktop and Cursor; see "converse help mcp".
type mcpConfig struct {
	Servers map[string]mcpServer `json:"mcpServers"`
}

// mcpServer is one server of an mcpConfig.
type mcpServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	// Fields of other clients: type is checked, disabled honored, and the
	// auto-approval lists ignored (converse asks instead).
	Type        string          `json:"type"`
	Disabled    bool            `json:"disabled"`
	AutoApprove json.RawMessage `json:"autoApprove"`
	AlwaysAllow json.RawMessage `json:"alwaysAllow"`
	// Our extensions.
	Timeout     string          `json:"timeout"`
	Concurrency int             `json:"maxConcurrency"`
	Include     []string        `json:"include"`
	Exclude     []string        `json:"exclude"`
	Approve     json.RawMessage `json:"approve"` // true, false or "destructive"
	// TrustAnnotations believes the server's tool annotations, for
	// "approve": "destructive".
	TrustAnnotations bool `json:"trustAnnotations"`
	// Auth authenticates the requests to a "url".
	Auth *mcpAuth `json:"auth"`
}

// mcpAuth is a url server's "auth". {"type": "sigv4", "service": ...,
// "region": ..., "profile": ...} signs each request with AWS credentials
// (of the default chain, or the profile). {"type": "bearer", "tokenEnv":
// "VAR"} sends the token in $VAR as "Authorization: Bearer TOKEN".
// {"type": "oauth"} runs OAuth's authorization code flow with PKCE (as a
// url server without "auth" does). {"type": "clientCredentials",
// "clientId": ..., "clientSecretEnv": "VAR"} runs its client credentials
// grant. See mcpoauth.go.
type mcpAuth struct {
	Type            string `json:"type"`
	Service         string `json:"service"`
	Region          string `json:"region"`
	Profile         string `json:"profile"`
	TokenEnv        string `json:"tokenEnv"`
	ClientID        string `json:"clientId"`
	ClientSecretEnv string `json:"clientSecretEnv"`
}

// apply sets up srv, a url server, to authenticate as a says. The token of
// a bearer is read from its variable now, and is never in the file.
func (a *mcpAuth) apply(srv *mcptools.Server) error {
	switch a.Type {
	case "sigv4":
		if a.Service == "" || a.Region == "" || a.TokenEnv != "" {
			return errors.New(`"sigv4" wants "service" and "region", and may name a "profile"`)
		}
		srv.HTTPClient = &http.Client{Transport: &mcptools.SigV4{Credentials: awsCredentials(a.Profile), Service: a.Service, Region: a.Region}}
		return nil
	case "bearer":
		if a.TokenEnv == "" || a.Service != "" || a.Region != "" || a.Profile != "" {
			return errors.New(`"bearer" wants "tokenEnv", the name of the environment variable holding the token`)
		}
		for k := range srv.Headers {
			if strings.EqualFold(k, "Authorization") {
				return errors.New(`"bearer" and an "Authorization" header: want one`)
			}
		}
		token := strings.TrimSpace(os.Getenv(a.TokenEnv))
		if token == "" {
			return fmt.Errorf(`"tokenEnv" %q: the variable is not set`, a.TokenEnv)
		}
		if !strings.HasPrefix(srv.URL, "https://") && !isLoopback(srv.URL) {
			return errors.New(`"bearer" over http would send the token in the clear: want an https "url"`)
		}
		srv.Headers = maps.Clone(srv.Headers)
		if srv.Headers == nil {
			srv.Headers = map[string]string{}
		}
		srv.Headers["Authorization"] = "Bearer " + token
		return nil
	case "oauth", "clientCredentials":
		return a.oauth(srv)
	}
	return fmt.Errorf(`"type" %q: want "sigv4", "bearer", "oauth" or "clientCredentials"`, a.Type)
}

// awsCredentials are the credentials of the default chain, or of the
// shared config profile, found at the first request and cached.
func awsCredentials(profile string) aws.CredentialsProvider {
	return aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
		var opts []func(*config.LoadOptions) error
		if profile != "" {
			opts = append(opts, config.WithSharedConfigProfile(profile))
		}
		cfg, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return aws.Credentials{}, err
		}
		if cfg.Credentials == nil {
			return aws.Credentials{}, errors.New("no AWS credentials found")
		}
		return cfg.Credentials.Retrieve(ctx)
	}))
}

// startMCP starts the servers of the -mcp file, if any, and adds their
// tools to reg. The returned function stops them. A server that fails to
// start is an error naming it.
func startMCP(ctx context.Context, s *settings, reg *tools.Registry, stderr io.Writer, progress *progressRelay) (*mcptools.Bridge, func(), error) {
	if s.mcpFile == "" {
		return nil, func() {}, nil
	}
	servers, err := loadMCP(s.mcpFile, s.verbose, stderr)
	if err != nil {
		return nil, nil, err
	}
	if progress != nil {
		for i := range servers {
			servers[i].Progress = progress.send
		}
	}
	b, err := mcptools.Connect(ctx, reg, servers...)
	if err != nil {
		// Connect's "mcptools: server NAME: " wraps the failure, which names
		// the server itself.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return nil, nil, fmt.Errorf("-mcp %s: %s", s.mcpFile, fromServer(err))
	}
	for _, w := range b.Warnings() {
		fmt.Fprintf(stderr, "converse: -mcp %s: %s\n", s.mcpFile, fromServer(w))
	}
	if s.verbose {
		for _, st := range b.Servers() {
			fmt.Fprintf(stderr, "· MCP server %s started: %d tools\n", trace.Printable(st.Name), st.Tools)
		}
	}
	return b, func() { _ = b.Close() }, nil
}

// fromServer is the text of an error of mcptools, made printable as the rest
// of what reaches standard error is, whether or not it is a terminal. Such an
// error can quote what a server sent (its error message, a tool's name).
func fromServer(err error) string {
	return trace.Printable(strings.TrimPrefix(err.Error(), "mcptools: "))
}

// loadMCP reads the -mcp file; every problem is a usageError naming the
// file and, where there is one, the server. Servers come in name order.
// Under -v, their standard error goes to stderr.
func loadMCP(path string, verbose bool, stderr io.Writer) ([]mcptools.Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("-mcp: %w", err)
	}
	servers, err := parseMCP(data, filepath.Dir(path))
	var cannot *cannotStart
	if errors.As(err, &cannot) {
		return nil, fmt.Errorf("-mcp %s: %w", path, cannot) // the file is right: exit 1
	}
	if err != nil {
		return nil, usagef("-mcp %s: %w", path, err)
	}
	promptOn(servers, stderr)
	if verbose {
		for i := range servers {
			if len(servers[i].Command) > 0 {
				servers[i].Stderr = stderr
			}
		}
	}
	return servers, nil
}

// parseMCP makes the servers of a configuration; relative program paths are
// taken from dir, the file's directory.
func parseMCP(data []byte, dir string) ([]mcptools.Server, error) {
	var c mcpConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, unknownField(data, jsonError(data, err))
	}
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		at := len(data) - len(rest)
		return nil, fmt.Errorf("line %d: data after the JSON object", 1+bytes.Count(data[:at], []byte("\n")))
	}
	if len(c.Servers) == 0 {
		return nil, errors.New(`no servers: want {"mcpServers": {"NAME": {"command": "...", "args": [...]}}}`)
	}
	var out []mcptools.Server
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		ms := c.Servers[name]
		if ms.Disabled {
			continue
		}
		srv, err := ms.server(name, dir)
		var cannot *cannotStart
		if err != nil && !errors.As(err, &cannot) {
			err = fmt.Errorf("server %q: %w", name, err)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, srv)
	}
	return out, nil
}

// unknownField names the server of an unknown field, found by decoding
// each alone, and points VS Code's "servers" to "mcpServers".
func unknownField(data []byte, err error) error {
	if !strings.Contains(err.Error(), "unknown field ") {
		return err
	}
	var c struct{ MCPServers map[string]json.RawMessage }
	if json.Unmarshal(data, &c) == nil {
		for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
			dec := json.NewDecoder(bytes.NewReader(c.MCPServers[name]))
			dec.DisallowUnknownFields()
			if dec.Decode(new(mcpServer)) != nil {
				return fmt.Errorf("server %q: %w", name, err)
			}
		}
	}
	if strings.Contains(err.Error(), `unknown field "servers"`) {
		return fmt.Errorf(`%w: did you mean "mcpServers"? (VS Code's files say "servers"; converse reads the format of Claude Desktop and Cursor)`, err)
	}
	return err
}

// server makes the mcptools.Server of one entry: it checks the entry, then
// sets its authorization, its program and its limits.
func (ms mcpServer) server(name, dir string) (mcptools.Server, error) {
	srv := mcptools.Server{Name: name, Env: ms.Env, Headers: ms.Headers, URL: ms.URL,
		Include: ms.Include, Exclude: ms.Exclude, Concurrency: ms.Concurrency,
		TrustAnnotations: ms.TrustAnnotations}
	if err := ms.check(name); err != nil {
		return srv, err
	}
	if err := ms.authorize(&srv); err != nil {
		return srv, err
	}
	if err := ms.program(&srv, name, dir); err != nil {
		return srv, err
	}
	if err := ms.limits(&srv); err != nil {
		return srv, err
	}
	return srv, nil
}

// check reports the first field of the entry that is wrong on its own or
// with the others.
func (ms mcpServer) check(name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("a server without a name")
	}
	for n, v := range ms.Env {
		if n == "" || strings.ContainsAny(n, "=\x00") || strings.ContainsRune(v, 0) {
			return fmt.Errorf(`"env" %q: a name must be non-empty, without '=' or NUL, a value without NUL`, n)
		}
	}
	switch {
	case ms.Command != "" && ms.URL != "":
		return errors.New(`both "command" and "url": want one`)
	case ms.Command == "" && ms.URL == "":
		return errors.New(`want "command" (a program run over stdio) or "url" (a streamable HTTP endpoint)`)
	case ms.Type == "sse":
		return errors.New(`"type": "sse" is not supported: converse speaks streamable HTTP`)
	case !slices.Contains([]string{"", "stdio", "http", "streamable-http", "streamableHttp"}, ms.Type):
		return fmt.Errorf(`"type" %q: want "stdio" or "http"`, ms.Type)
	case ms.URL != "" && len(ms.Env) > 0:
		return errors.New(`"env" is for a "command"`)
	case ms.Command != "" && len(ms.Headers) > 0:
		return errors.New(`"headers" are for a "url"`)
	case ms.Concurrency < 0:
		return fmt.Errorf(`"maxConcurrency" %d: want a positive number`, ms.Concurrency)
	}
	if ms.URL != "" {
		if u, err := url.Parse(ms.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf(`"url" %q: want an http or https URL with a host`, ms.URL)
		}
	}
	return nil
}

// authorize applies the entry's "auth", or the default OAuth without one.
func (ms mcpServer) authorize(srv *mcptools.Server) error {
	if ms.Auth == nil {
		defaultOAuth(srv)
		return nil
	}
	if ms.URL == "" {
		return errors.New(`"auth" is for a "url"`)
	}
	if err := ms.Auth.apply(srv); err != nil {
		return fmt.Errorf(`"auth": %w`, err)
	}
	return nil
}

// program finds the entry's "command" from dir. A program that is not there
// is a cannotStart, not a usage error.
func (ms mcpServer) program(srv *mcptools.Server, name, dir string) error {
	if ms.Command == "" {
		return nil
	}
	program, err := findProgram(ms.Command, dir)
	if err != nil {
		return &cannotStart{name, err}
	}
	srv.Command = append([]string{program}, ms.Args...)
	return nil
}

// limits sets the entry's "timeout" and its approval policy.
func (ms mcpServer) limits(srv *mcptools.Server) error {
	if ms.Timeout != "" {
		d, err := time.ParseDuration(ms.Timeout)
		if err != nil || d <= 0 {
			return fmt.Errorf(`"timeout" %q: want a positive Go duration such as 30s or 2m`, ms.Timeout)
		}
		srv.Timeout = d
	}
	approve, err := approval(ms.Approve)
	if err != nil {
		return err
	}
	srv.ApprovalPolicy = approve
	return nil
}

// cannotStart is a server whose program is not there. The configuration is
// right, but the server cannot start. That is a failure (exit status 1) like a
// server that exits at once, not a usage error.
type cannotStart struct {
	name string
	err  error
}

func (e *cannotStart) Error() string {
	return fmt.Sprintf("the MCP server %q could not be started: %v", e.name, e.err)
}

func (e *cannotStart) Unwrap() error { return e.err }

// approval reads "approve": true asks for every call of the server's tools,
// false or nothing for none. "destructive" asks for those of tools the server
// does not declare read-only or non-destructive. Unless "trustAnnotations" is
// true, those are all of them: see mcptools.Server.TrustAnnotations.
func approval(raw json.RawMessage) (func(string, mcptools.Annotations) bool, error) {
	var b bool
	var s string
	switch {
	case len(raw) == 0:
		return nil, nil
	case json.Unmarshal(raw, &b) == nil:
		if !b {
			return nil, nil
		}
		return func(string, mcptools.Annotations) bool { return true }, nil
	case json.Unmarshal(raw, &s) == nil && s == "destructive":
		return func(_ string, a mcptools.Annotations) bool { return a.Destructive }, nil
	}
	return nil, fmt.Errorf(`"approve" %s: want true, false or "destructive"`, raw)
}

// progressRelay hands the MCP servers' progress notifications to whoever
// shows them, set once the run's printer exists; before that, and with
// none set, they are dropped.
type progressRelay struct {
	mu   sync.Mutex
	show func(mcptools.Progress)
}

func (r *progressRelay) set(show func(mcptools.Progress)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.show = show
}

func (r *progressRelay) send(p mcptools.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.show != nil {
		r.show(p)
	}
}
