package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// authorizeWait bounds the start of a server that may need you to
// authorize converse in a browser, instead of mcptools' 30 seconds.
const authorizeWait = 5 * time.Minute

// authClientTimeout bounds each request to an authorization server.
const authClientTimeout = 30 * time.Second

// oauth sets up srv, a url server, for "oauth" (the authorization code
// flow with PKCE) or "clientCredentials".
func (a *mcpAuth) oauth(srv *mcptools.Server) error {
	if a.Service != "" || a.Region != "" || a.Profile != "" || a.TokenEnv != "" {
		return fmt.Errorf(`%q takes "clientId" and "clientSecretEnv" only`, a.Type)
	}
	if hasAuthorization(srv.Headers) {
		return fmt.Errorf(`%q and an "Authorization" header: want one`, a.Type)
	}
	if !strings.HasPrefix(srv.URL, "https://") && !isLoopback(srv.URL) {
		return fmt.Errorf(`%q over http would send the tokens in the clear: want an https "url"`, a.Type)
	}
	var secret string
	if a.ClientSecretEnv != "" {
		if secret = strings.TrimSpace(os.Getenv(a.ClientSecretEnv)); secret == "" {
			return fmt.Errorf(`"clientSecretEnv" %q: the variable is not set`, a.ClientSecretEnv)
		}
	}
	if a.Type == "oauth" {
		srv.OAuth, srv.StartupTimeout = newCodeFlow(srv.Name, srv.URL, a.ClientID, secret), authorizeWait
		return nil
	}
	if a.ClientID == "" || secret == "" {
		return errors.New(`"clientCredentials" wants "clientId" and "clientSecretEnv", the name of the environment variable holding the secret`)
	}
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{HTTPClient: authClient(),
		Credentials: &oauthex.ClientCredentials{ClientID: a.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: secret}}})
	if err != nil {
		return err
	}
	srv.OAuth = &detachedAuth{handler: h}
	return nil
}

// defaultOAuth gives a url server that has no "auth" and no Authorization
// header the authorization code flow, for when it answers 401 asking for
// OAuth, if its URL is https or on this machine.
func defaultOAuth(srv *mcptools.Server) {
	if srv.URL == "" || hasAuthorization(srv.Headers) || (!strings.HasPrefix(srv.URL, "https://") && !isLoopback(srv.URL)) {
		return
	}
	srv.OAuth, srv.StartupTimeout = newCodeFlow(srv.Name, srv.URL, "", ""), authorizeWait
}

// promptOn has the authorization code flows of servers print the URL to
// open on w.
func promptOn(servers []mcptools.Server, w io.Writer) {
	for _, s := range servers {
		if f, ok := s.OAuth.(*codeFlow); ok {
			f.prompt = w
		}
	}
}

func hasAuthorization(headers map[string]string) bool {
	for k := range headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

// authClient makes the requests to authorization servers: metadata,
// registration, tokens. It follows no redirect: the token endpoint gets the
// client's secret, and a code or a refresh token.
func authClient() *http.Client {
	return &http.Client{Timeout: authClientTimeout,
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("the authorization server redirected to %s: refused", req.URL.Redacted())
		}}
}

// detachedAuth is an OAuth handler whose Authorize keeps working after the
// request that called it. extauth's client credentials handler makes its token
// source with Authorize's context and uses it for every later token. Those
// would fail once that request's context ended. authClient's timeout bounds it
// instead. It also serializes the handler, which has no lock.
type detachedAuth struct {
	mu      sync.Mutex
	handler auth.OAuthHandler
}

// TokenSource is the handler's token source.
func (d *detachedAuth) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.handler.TokenSource(ctx)
}

// Authorize gets a new token, detached from ctx's end.
func (d *detachedAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.handler.Authorize(context.WithoutCancel(ctx), req, resp)
}

// oauthChallenge reports whether a refused response asks for OAuth: a 401
// with a Bearer challenge, or a 403 whose challenge says the token lacks
// scope (step-up authorization).
func oauthChallenge(resp *http.Response) bool {
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range challenges {
		if c.Scheme == "bearer" && (resp.StatusCode == http.StatusUnauthorized || c.Params["error"] == "insufficient_scope") {
			return true
		}
	}
	return false
}

// discard drains and closes a response that Authorize does not pass on.
func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
}

// printURL tells the user to open url, which the authorization server's
// metadata made, so it is made printable.
func printURL(w io.Writer, server, url string) {
	if w == nil {
		w = io.Discard
	}
	fmt.Fprintf(w, "converse: the MCP server %q wants you to authorize converse; open this URL in your browser:\n  %s\n",
		trace.Printable(server), trace.Printable(url))
}

// listenForRedirect opens the loopback listener of a redirect (RFC 8252 section 7.3):
// any free port of 127.0.0.1.
func listenForRedirect() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("a listener for the authorization's redirect: %w", err)
	}
	return ln, "http://" + ln.Addr().String() + "/callback", nil
}
