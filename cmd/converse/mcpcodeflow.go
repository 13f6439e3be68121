package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// codeFlow authorizes a url server's requests with the go-sdk's authorization
// code flow with PKCE. On a 401 asking for OAuth it discovers the
// authorization server (RFC 9728, RFC 8414). It registers converse (RFC 7591)
// unless a client id is given. It prints the URL for the user to open, and
// takes the code at a loopback redirect. Its tokens are kept in the user's
// token file, by the server's URL, and refreshed; a token the server refuses
// is refreshed once before the user is asked again.
type codeFlow struct {
	name, url              string // the server's
	clientID, clientSecret string // given in the file, or none
	store                  tokenStore
	client                 *http.Client
	prompt                 io.Writer // where the URL to open is printed

	// authorizing is held by Authorize, so that refused requests in
	// flight together refresh the token, or ask the user, once.
	authorizing sync.Mutex

	mu     sync.Mutex
	source oauth2.TokenSource // nil until loaded or authorized
	loaded bool               // the token file was read
	forced string             // the access token of the last refresh forced by a 401
}

func newCodeFlow(name, url, clientID, clientSecret string) *codeFlow {
	return &codeFlow{name: name, url: url, clientID: clientID, clientSecret: clientSecret,
		store: userTokenStore(), client: authClient()}
}

// TokenSource is the source of the server's tokens: those kept in the
// token file, refreshed when they expire, until an authorization.
func (f *codeFlow) TokenSource(context.Context) (oauth2.TokenSource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.loaded {
		f.loaded = true
		if g, ok := f.store.load(f.url); ok && g.Token != nil {
			f.source = f.kept(f.refreshContext(), g.config(), g.Token)
		}
	}
	return f.source, nil
}

// Authorize answers a refused request: one that does not ask for OAuth is
// sent again as it is (to fail with its status); a refused token is
// refreshed, once; else the user authorizes converse.
func (f *codeFlow) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	f.authorizing.Lock()
	defer f.authorizing.Unlock()
	if !oauthChallenge(resp) {
		discard(resp)
		return nil
	}
	if resp.StatusCode == http.StatusUnauthorized && f.refreshed(ctx, strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")) {
		discard(resp)
		return nil
	}
	return f.authorize(ctx, req, resp)
}

// refreshed gets a new access token with the refresh token, for a refused
// one, unless the refused one came from such a refresh already. It reads,
// refreshes and saves under the token file's lock, so that another converse
// refreshing at the same moment does not spend the refresh token first.
func (f *codeFlow) refreshed(ctx context.Context, refused string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	unlock, err := f.store.lock()
	if err != nil {
		return false
	}
	defer unlock()
	g, ok := f.store.get(f.url)
	if !ok || g.Token == nil || g.Token.RefreshToken == "" || (refused != "" && refused == f.forced) {
		return false
	}
	if refused != "" && refused != g.Token.AccessToken { // refreshed since, here or by another converse
		f.source = f.kept(f.refreshContext(), g.config(), g.Token)
		return true
	}
	cfg := g.config()
	expired := &oauth2.Token{RefreshToken: g.Token.RefreshToken, Expiry: time.Unix(1, 0)}
	tok, err := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, f.client), expired).Token()
	if err != nil {
		return false
	}
	_ = f.store.put(f.url, grantOf(cfg, tok)) // as savingSource does: a failure leaves the token working
	f.forced = tok.AccessToken
	f.source = f.kept(f.refreshContext(), cfg, tok)
	return true
}

// authorize runs the go-sdk's authorization code flow, with a redirect to
// a loopback listener of its own.
func (f *codeFlow) authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	ln, redirect, err := listenForRedirect()
	if err != nil {
		discard(resp)
		return err
	}
	defer ln.Close()
	cfg := &auth.AuthorizationCodeHandlerConfig{RedirectURL: redirect, Client: f.client, RequestRefreshToken: true,
		AuthorizationCodeFetcher: f.fetch(ln), NewTokenSource: f.keep}
	if f.clientID != "" {
		pre := &oauthex.ClientCredentials{ClientID: f.clientID}
		if f.clientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: f.clientSecret}
		}
		cfg.PreregisteredClient = pre
	} else {
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "converse", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}}}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		discard(resp)
		return err
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return err
	}
	source, _ := h.TokenSource(ctx) // never fails
	f.mu.Lock()
	defer f.mu.Unlock()
	f.source = source
	return nil
}

// keep is the NewTokenSource of the SDK's handler: the new token, and the
// client that refreshes it, are kept in the token file.
func (f *codeFlow) keep(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	if err := f.store.save(f.url, grantOf(cfg, tok)); err != nil {
		return nil, err
	}
	return f.kept(ctx, cfg, tok), nil
}

// kept is a source of tokens from tok on, refreshed by cfg with ctx's
// client, each new one saved in the token file.
func (f *codeFlow) kept(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) oauth2.TokenSource {
	s := &savingSource{flow: f, ctx: ctx, cfg: cfg, refresh: tok.RefreshToken, next: cfg.TokenSource(ctx, tok)}
	return oauth2.ReuseTokenSource(tok, s)
}

// refreshContext carries the client of refreshes; it does not end, as the
// token source outlives the request that made it.
func (f *codeFlow) refreshContext() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, f.client)
}

// savingSource saves each token that its next source gets. Refresh tokens
// rotate, and another converse process may refresh too: so a token is got
// under the token file's lock, and if the file holds a refresh token other
// than this one's, another process refreshed since, and its tokens are
// taken up. Its caller, an oauth2.ReuseTokenSource, never calls Token
// concurrently.
type savingSource struct {
	flow    *codeFlow
	ctx     context.Context
	cfg     *oauth2.Config
	refresh string // the refresh token next holds
	next    oauth2.TokenSource
}

// Token is a token of next; a new one is saved. A failure to take the lock
// or to save is not the request's: the token works, and is asked for again
// next time.
func (s *savingSource) Token() (*oauth2.Token, error) {
	store, url := s.flow.store, s.flow.url
	unlock, lockErr := store.lock()
	if lockErr == nil {
		defer unlock()
		if g, ok := store.get(url); ok && g.Token != nil && g.Token.RefreshToken != "" && g.Token.RefreshToken != s.refresh {
			s.cfg = g.config()
			s.next, s.refresh = s.cfg.TokenSource(s.ctx, g.Token), g.Token.RefreshToken
		}
	}
	tok, err := s.next.Token()
	if err != nil {
		return nil, err
	}
	if tok.RefreshToken != "" {
		s.refresh = tok.RefreshToken
	}
	if lockErr == nil {
		_ = store.put(url, grantOf(s.cfg, tok))
	}
	return tok, nil
}

// fetch is the AuthorizationCodeFetcher: it prints the URL to open and
// waits for the authorization server to redirect the browser to ln.
func (f *codeFlow) fetch(ln net.Listener) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		got := make(chan *auth.AuthorizationResult, 1)
		refused := make(chan string, 1)
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			switch {
			case r.URL.Path != "/callback":
				http.NotFound(w, r)
			case q.Get("error") != "":
				select {
				case refused <- q.Get("error"):
				default:
				}
				fmt.Fprintln(w, "converse was not authorized. You can close this window.")
			default:
				select {
				case got <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}:
				default:
				}
				fmt.Fprintln(w, "converse is authorized. You can close this window.")
			}
		})}
		go func() { _ = srv.Serve(ln) }()
		defer func() { // the browser gets its page before the listener closes
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
		}()
		printURL(f.prompt, f.name, args.URL)
		select {
		case res := <-got:
			return res, nil
		case why := <-refused:
			return nil, fmt.Errorf("the authorization server refused: %s", why)
		case <-ctx.Done():
			return nil, errors.Join(errors.New("no authorization in time"), ctx.Err())
		}
	}
}
