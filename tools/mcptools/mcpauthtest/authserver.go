package mcpauthtest

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// farFuture is the expiry the MCP endpoint gives every token it accepts:
// a token is refused when Expire says so, not by the clock.
var farFuture = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// authorizationServer is the handler of the authorization server.
func (s *Server) authorizationServer() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, &oauthex.AuthServerMeta{
			Issuer:                            s.Issuer,
			AuthorizationEndpoint:             s.Issuer + "/authorize",
			TokenEndpoint:                     s.Issuer + "/token",
			RegistrationEndpoint:              s.Issuer + "/register",
			ResponseTypesSupported:            []string{"code"},
			GrantTypesSupported:               []string{"authorization_code", "refresh_token", "client_credentials"},
			CodeChallengeMethodsSupported:     []string{"S256"},
			TokenEndpointAuthMethodsSupported: []string{"none", "client_secret_post", "client_secret_basic"},
		})
	})
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	return mux
}

// register registers a public client (RFC 7591).
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var meta oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata")
		return
	}
	s.mu.Lock()
	s.counts["register"]++
	id := "client-" + rand.Text() // public: it is in the authorization URL
	s.clients[id] = meta.RedirectURIs
	s.mu.Unlock()
	meta.TokenEndpointAuthMethod = "none"
	writeJSON(w, http.StatusCreated, &oauthex.ClientRegistrationResponse{ClientID: id, ClientRegistrationMetadata: meta})
}

// authorize grants at once what the client asks, as a user who consents
// would, if the request is a valid one with a PKCE challenge.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	redirects, known := s.clients[q.Get("client_id")]
	redirect := q.Get("redirect_uri")
	if !known || (redirects != nil && !slices.Contains(redirects, redirect)) || !isLoopbackURL(redirect) {
		http.Error(w, "unknown client or redirect URI", http.StatusBadRequest) // never redirect to an unchecked URI
		return
	}
	state := q.Get("state")
	switch {
	case q.Get("response_type") != "code":
		redirectError(w, r, redirect, state, "unsupported_response_type")
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") != s.URL:
		redirectError(w, r, redirect, state, "invalid_request")
		return
	}
	s.counts["authorize"]++
	code := s.newSecret("code")
	s.codes[code] = grant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
	u, _ := url.Parse(redirect)
	u.RawQuery = url.Values{"code": {code}, "state": {state}}.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// token answers the token endpoint's grants.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kind := r.PostForm.Get("grant_type")
	var ok bool
	switch kind {
	case "authorization_code":
		ok = s.codeGranted(r)
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		ok = s.refresh[rt]
		delete(s.refresh, rt) // refresh tokens rotate, as OAuth 2.1 asks of public clients
	case "client_credentials":
		ok = s.confidential(r)
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	if !ok {
		oauthError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	s.counts[kind]++
	resp := map[string]any{"access_token": s.newSecret("access"), "token_type": "Bearer", "expires_in": s.expiresIn()}
	s.access[resp["access_token"].(string)] = true
	if kind != "client_credentials" {
		rt := s.newSecret("refresh")
		s.refresh[rt] = true
		resp["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, resp)
}

// codeGranted checks an authorization code, once, with its PKCE verifier
// and redirect URI.
func (s *Server) codeGranted(r *http.Request) bool {
	code := r.PostForm.Get("code")
	g, ok := s.codes[code]
	delete(s.codes, code)
	return ok && g.client == r.PostForm.Get("client_id") && g.redirect == r.PostForm.Get("redirect_uri") &&
		challengeOf(r.PostForm.Get("code_verifier")) == g.challenge
}

// confidential checks the client's id and secret, in the form or in basic
// authentication.
func (s *Server) confidential(r *http.Request) bool {
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	return s.opts.ClientID != "" && id == s.opts.ClientID &&
		subtle.ConstantTimeCompare([]byte(secret), []byte(s.opts.ClientSecret)) == 1
}

func (s *Server) expiresIn() int {
	if s.opts.ExpiresIn == 0 {
		return 3600
	}
	return s.opts.ExpiresIn
}

// isLoopbackURL reports whether u is an http URL on this machine, where a
// native client listens for its redirect (RFC 8252).
func isLoopbackURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "http" && (p.Hostname() == "127.0.0.1" || p.Hostname() == "::1" || p.Hostname() == "localhost")
}
