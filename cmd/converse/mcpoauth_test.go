package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
	"github.com/tooluse/bedrock/tools/mcptools/mcpauthtest"
)

// browserUser is the standard error of a converse that may print a URL to
// open: the user opens it at once (an HTTP GET that follows the
// authorization server's redirect to converse's loopback listener).
type browserUser struct {
	t      *testing.T
	mu     sync.Mutex
	buf    bytes.Buffer
	opened int
	done   sync.WaitGroup
}

func (b *browserUser) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	lines := strings.Split(b.buf.String(), "\n")
	var urls []string
	for i, line := range lines[:len(lines)-1] { // whole lines only
		if strings.Contains(line, "open this URL in your browser:") && i+1 < len(lines)-1 {
			urls = append(urls, strings.TrimSpace(lines[i+1]))
		}
	}
	for _, u := range urls[b.opened:] {
		b.opened++
		b.done.Add(1)
		go func() {
			defer b.done.Done()
			resp, err := http.Get(u)
			if assert.NoError(b.t, err, "the browser") {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.Contains(b.t, string(body), "converse is authorized")
			}
		}()
	}
	return len(p), nil
}

func (b *browserUser) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tracedGreeter is an MCP server with a greet tool that notes the
// traceparent of its calls.
func tracedGreeter(traceparents chan<- string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Greets."},
		func(_ context.Context, req *mcp.CallToolRequest, in struct {
			Name string `json:"name"`
		}) (*mcp.CallToolResult, any, error) {
			tp, _ := req.Params.Meta["traceparent"].(string)
			traceparents <- tp
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + in.Name}}}, nil, nil
		})
	return srv
}

// TestMCPOAuthAuthorizationCode: a url server without an Authorization header
// that answers 401 gets the authorization code flow with PKCE. converse
// registers itself, prints the URL, takes the code at its loopback redirect
// and keeps the tokens in a 0600 file of the user's. The next run uses them; a
// token the server refuses is refreshed, without asking the user again. No
// token, code or secret is in standard error (under -v), standard output
// (-json), the recording or the spans; each call's _meta carries the
// traceparent of its execute_tool span.
func TestMCPOAuthAuthorizationCode(t *testing.T) {
	t.Parallel()
	traceparents := make(chan string, 4)
	as := mcpauthtest.NewServer(tracedGreeter(traceparents), mcpauthtest.Options{})
	t.Cleanup(as.Close)
	config := writeMCP(t, `{"mcpServers": {"web": {"url": "`+as.URL+`"}}}`)
	configHome := t.TempDir()
	rec := newOTLPReceiver(t)
	model := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "web__greet", Input: map[string]any{"name": "Ada"}}),
		bedrocktest.Text("Done."),
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t2", Name: "web__greet", Input: map[string]any{"name": "Bob"}}),
		bedrocktest.Text("Done again."),
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t3", Name: "web__greet", Input: map[string]any{"name": "Cy"}}),
		bedrocktest.Text("Done once more."),
	))
	recording := filepath.Join(t.TempDir(), "chat.json")
	env := testEnv(t, "XDG_CONFIG_HOME="+configHome, "OTEL_EXPORTER_OTLP_ENDPOINT="+rec.URL)
	converse := func(args ...string) (outcome, *browserUser) {
		return runWithBrowser(t, env, append([]string{"-endpoint", model.URL, "-mcp", config, "-v", "-json"}, args...)...)
	}

	first, user := converse("-record", recording, "Greet Ada.")
	require.Zero(t, first.code, first.stderr)
	assert.Equal(t, 1, user.opened, "the user was asked once")
	assert.Contains(t, first.stderr, `converse: the MCP server "web" wants you to authorize converse; open this URL in your browser:`)
	assert.Equal(t, 1, as.Count("register"))
	assert.Equal(t, 1, as.Count("authorization_code"))
	info, err := os.Stat(filepath.Join(configHome, "converse", "mcp-tokens.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	var later []outcome
	for i, prompt := range []string{"Greet Bob.", "Greet Cy."} {
		as.Expire()
		out, user := converse(prompt)
		require.Zero(t, out.code, out.stderr)
		assert.Zero(t, user.opened, "the kept tokens were used, and refreshed")
		assert.Equal(t, 1, as.Count("authorize"))
		assert.Equal(t, i+1, as.Count("refresh_token"), "the refreshed tokens were kept")
		later = append(later, out)
	}

	spans, _ := rec.spans()
	calls := spans["execute_tool web__greet"]
	require.Len(t, calls, 3)
	for _, span := range calls {
		tp := <-traceparents
		assert.Equal(t, "00-"+hex.EncodeToString(span.TraceId)+"-"+hex.EncodeToString(span.SpanId)+"-01", tp, "the server's call joins the tool's span")
	}

	var stderr, stdout string
	for _, r := range append(later, first) {
		stderr, stdout = stderr+r.stderr, stdout+r.stdout
	}
	data, err := os.ReadFile(recording)
	require.NoError(t, err)
	assertNoSecret(t, as.Secrets(), map[string]string{"stderr": stderr, "stdout": stdout,
		"the recording": string(data), "the spans": exportedText(rec)})
}

// exportedText is the text of the trace exports rec received.
func exportedText(rec *otlpReceiver) string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var b strings.Builder
	for _, r := range rec.requests {
		b.WriteString(r.String())
	}
	return b.String()
}

// runWithBrowser runs the converse binary with env and args, and a user
// who opens each URL it prints to open.
func runWithBrowser(t *testing.T, env []string, args ...string) (outcome, *browserUser) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, env, args...)
	user := &browserUser{t: t}
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, user
	code := 0
	if err := cmd.Run(); err != nil {
		code = -1
	}
	user.done.Wait()
	checkRace(t, code, user.String())
	return outcome{stdout.String(), user.String(), code}, user
}

// assertNoSecret checks that none of secrets is in any of texts, by name.
func assertNoSecret(t *testing.T, secrets []string, texts map[string]string) {
	t.Helper()
	require.NotEmpty(t, secrets)
	for _, secret := range secrets {
		for what, text := range texts {
			assert.NotContains(t, text, secret, "%s holds a credential", what)
		}
	}
}

// TestMCPOAuthClientCredentials: "clientCredentials" gets tokens with the
// client's id and secret, for unattended use, and a new one when the
// server refuses its token; the secret is read from the environment.
func TestMCPOAuthClientCredentials(t *testing.T) {
	as := mcpauthtest.NewServer(tracedGreeter(make(chan string, 4)), mcpauthtest.Options{ClientID: "robot", ClientSecret: "s3cret-value", ExpiresIn: 1})
	t.Cleanup(as.Close)
	t.Setenv("ROBOT_SECRET", "s3cret-value")
	servers, err := parseMCP([]byte(`{"mcpServers": {"svc": {"url": "`+as.URL+`",
		"auth": {"type": "clientCredentials", "clientId": "robot", "clientSecretEnv": "ROBOT_SECRET"}}}}`), t.TempDir())
	require.NoError(t, err)
	reg := new(tools.Registry)
	b, err := mcptools.Connect(t.Context(), reg, servers...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	tool, ok := reg.Lookup("svc__greet")
	require.True(t, ok)
	for range 2 { // the token expires at once: each request gets another, after the start's context ended
		_, err = tool.Call(t.Context(), []byte(`{"name":"Ada"}`))
		require.NoError(t, err)
	}
	assert.GreaterOrEqual(t, as.Count("client_credentials"), 3)
	as.Expire()
	_, err = tool.Call(t.Context(), []byte(`{"name":"Ada"}`))
	require.NoError(t, err)
	assert.Zero(t, as.Count("authorize"))
}

func TestMCPOAuthConfig(t *testing.T) {
	t.Setenv("ROBOT_SECRET", "x")
	servers, err := parseMCP([]byte(`{"mcpServers": {
		"plain": {"url": "https://mcp.example.com/mcp"},
		"headed": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}},
		"remote": {"url": "http://mcp.example.com/mcp"},
		"stdio": {"command": "sh"}
	}}`), t.TempDir())
	require.NoError(t, err)
	byName := map[string]mcptools.Server{}
	for _, s := range servers {
		byName[s.Name] = s
	}
	assert.IsType(t, &codeFlow{}, byName["plain"].OAuth, "the default of a url server")
	assert.Equal(t, authorizeWait, byName["plain"].StartupTimeout, "time to authorize")
	assert.Nil(t, byName["headed"].OAuth, "an Authorization header of its own")
	assert.Nil(t, byName["remote"].OAuth, "no tokens over plain http")
	assert.Nil(t, byName["stdio"].OAuth)

	for _, tc := range []struct{ name, auth, url, want string }{
		{"client credentials without a secret", `{"type": "clientCredentials", "clientId": "robot"}`, "https://x/mcp", `"clientCredentials" wants "clientId" and "clientSecretEnv"`},
		{"unset secret", `{"type": "clientCredentials", "clientId": "robot", "clientSecretEnv": "NOT_SET_ANYWHERE_48"}`, "https://x/mcp", `"clientSecretEnv" "NOT_SET_ANYWHERE_48": the variable is not set`},
		{"oauth in the clear", `{"type": "oauth"}`, "http://mcp.example.com/mcp", `would send the tokens in the clear`},
		{"oauth with sigv4's fields", `{"type": "oauth", "region": "us-east-1"}`, "https://x/mcp", `"oauth" takes "clientId" and "clientSecretEnv" only`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseMCP([]byte(`{"mcpServers": {"a": {"url": "`+tc.url+`", "auth": `+tc.auth+`}}}`), t.TempDir())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestMCPTokenFileVersion1 reads a token file of version 1, the format
// documented at tokenFile.
func TestMCPTokenFileVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-tokens.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 1, "servers": {"https://mcp.example.com/mcp": {
		"clientId": "c", "tokenUrl": "https://as.example.com/token", "authStyle": 1, "scopes": ["read"],
		"token": {"access_token": "a", "token_type": "Bearer", "refresh_token": "r", "expiry": "2026-12-04T22:00:00Z"}}}}`), 0o600))
	g, ok := tokenStore{path: path}.load("https://mcp.example.com/mcp")
	require.True(t, ok)
	assert.Equal(t, "c", g.ClientID)
	assert.Equal(t, "https://as.example.com/token", g.config().Endpoint.TokenURL)
	assert.Equal(t, []string{"read"}, g.config().Scopes)
	assert.Equal(t, "r", g.Token.RefreshToken)
	assert.Equal(t, time.Date(2026, 12, 4, 22, 0, 0, 0, time.UTC), g.Token.Expiry.UTC())
}

// TestMCPRefreshAfterAnotherProcess: two converse processes hold the same
// kept tokens of a server whose refresh tokens rotate. Each refresh goes on
// from the refresh token the file holds, so neither spends one the other
// has spent, and both keep working.
func TestMCPRefreshAfterAnotherProcess(t *testing.T) {
	as, store, _, sources := sharedTokens(t)
	for round := range 2 {
		for i, src := range sources { // each token lives 1 s, under oauth2's 10 s margin: every Token refreshes
			got, err := src.Token()
			require.NoError(t, err, "round %d, process %d", round, i)
			g, ok := store.load(as.URL)
			require.True(t, ok)
			assert.Equal(t, got.AccessToken, g.Token.AccessToken, "the new token is kept")
		}
	}
	assert.Equal(t, 4, as.Count("refresh_token"))
}

// sharedTokens is an MCP server behind an authorization server whose
// refresh tokens rotate and whose access tokens live 1 s, the token file
// where converse keeps a grant of its, the grant's client, and two token
// sources loaded from the file, as two converse processes would.
func sharedTokens(t *testing.T) (*mcpauthtest.Server, tokenStore, *oauth2.Config, []oauth2.TokenSource) {
	t.Helper()
	as := mcpauthtest.NewServer(mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil), mcpauthtest.Options{ClientID: "app", ExpiresIn: 1})
	t.Cleanup(as.Close)
	store := tokenStore{path: filepath.Join(t.TempDir(), "mcp-tokens.json")}
	cfg, tok := authorizeByHand(t, as)
	require.NoError(t, store.save(as.URL, grantOf(cfg, tok)))
	var sources []oauth2.TokenSource
	for range 2 {
		f := newCodeFlow("web", as.URL, "", "")
		f.store, f.client = store, http.DefaultClient
		src, err := f.TokenSource(t.Context())
		require.NoError(t, err)
		sources = append(sources, src)
	}
	return as, store, cfg, sources
}

// authorizeByHand runs the authorization code flow with PKCE against as for
// its registered client, as a browser and converse would, and returns the
// client's configuration and its tokens.
func authorizeByHand(t *testing.T, as *mcpauthtest.Server) (*oauth2.Config, *oauth2.Token) {
	t.Helper()
	cfg := &oauth2.Config{ClientID: "app", RedirectURL: "http://127.0.0.1:1/callback",
		Endpoint: oauth2.Endpoint{AuthURL: as.Issuer + "/authorize", TokenURL: as.Issuer + "/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(cfg.AuthCodeURL("state", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", as.URL)))
	require.NoError(t, err)
	resp.Body.Close()
	to, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	tok, err := cfg.Exchange(t.Context(), to.Query().Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	require.NotEmpty(t, tok.RefreshToken)
	return cfg, tok
}
