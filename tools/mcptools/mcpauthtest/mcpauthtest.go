// Package mcpauthtest runs an MCP server behind an OAuth 2.1 authorization
// server, both on loopback, for tests of clients, as net/http/httptest runs
// an HTTP server.
//
// The MCP endpoint is protected by the go-sdk's auth.RequireBearerToken: a
// request without a valid token gets a 401 whose WWW-Authenticate names the
// protected resource metadata (RFC 9728). The authorization server, on
// another origin, serves its metadata (RFC 8414) and dynamic client
// registration (RFC 7591). Its authorization endpoint redirects at once,
// without a login, and checks the PKCE challenge (S256 only). Its token
// endpoint takes the authorization_code (with the PKCE verifier),
// refresh_token and client_credentials grants.
package mcpauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Options configure a [Server].
type Options struct {
	// ClientID and ClientSecret are a client registered beforehand, for the
	// client_credentials grant (and the authorization code too); empty
	// means none.
	ClientID, ClientSecret string
	// ExpiresIn is the lifetime, in seconds, that the token endpoint gives
	// its access tokens; zero means an hour. The MCP endpoint accepts a
	// token until Expire, whatever it says: a lifetime shorter than
	// oauth2's ten seconds of margin makes the client refresh its token
	// before every request.
	ExpiresIn int
}

// Server is an MCP server behind an authorization server.
type Server struct {
	// URL is the MCP endpoint, on the resource server: http://127.0.0.1:PORT/mcp.
	URL string
	// Issuer is the authorization server's URL, on another origin.
	Issuer string

	resource, issuer *httptest.Server
	opts             Options

	mu      sync.Mutex
	clients map[string][]string // redirect URIs, by client id
	codes   map[string]grant    // authorization codes not yet used
	access  map[string]bool     // access tokens accepted
	refresh map[string]bool     // refresh tokens not yet used
	issued  []string            // every token and code issued
	counts  map[string]int
}

// grant is what an authorization code was issued for.
type grant struct {
	client, redirect, challenge string
}

// NewServer starts an MCP server serving srv (a new session of it for
// each client's session), and its authorization server. Close stops both.
func NewServer(srv *mcp.Server, opts Options) *Server {
	s := &Server{opts: opts, clients: map[string][]string{}, codes: map[string]grant{},
		access: map[string]bool{}, refresh: map[string]bool{}, counts: map[string]int{}}
	if opts.ClientID != "" {
		s.clients[opts.ClientID] = nil
	}
	s.issuer = httptest.NewServer(s.authorizationServer())
	s.Issuer = s.issuer.URL
	mux := http.NewServeMux()
	s.resource = httptest.NewServer(mux)
	s.URL = s.resource.URL + "/mcp"
	metadataURL := s.resource.URL + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(
		&oauthex.ProtectedResourceMetadata{Resource: s.URL, AuthorizationServers: []string{s.Issuer}}))
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux.Handle("/mcp", auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: metadataURL})(mcpHandler))
	return s
}

// Close stops the servers.
func (s *Server) Close() {
	s.resource.Close()
	s.issuer.Close()
}

// Expire makes the MCP endpoint refuse every access token issued so far,
// as if they had expired: the next request gets a 401.
func (s *Server) Expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// Count is how many times the authorization server did kind: "register",
// "authorize", or a grant type ("authorization_code", "refresh_token",
// "client_credentials").
func (s *Server) Count(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[kind]
}

// Secrets are every token and code the authorization server issued, and
// the client secret (not the client ids, which are public), for a test to look for where they must not be.
func (s *Server) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.issued)
	if s.opts.ClientSecret != "" {
		out = append(out, s.opts.ClientSecret)
	}
	return out
}

// verify is the MCP endpoint's token verifier.
func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.access[token] {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Expiration: farFuture}, nil
}

// newSecret is a random value of kind, noted as issued.
func (s *Server) newSecret(kind string) string {
	v := kind + "-" + rand.Text()
	s.issued = append(s.issued, v)
	return v
}

// challengeOf is the S256 PKCE challenge of verifier (RFC 7636).
func challengeOf(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// oauthError answers an OAuth error (RFC 6749 section 5.2).
func oauthError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code})
}

// redirectError sends the browser back to redirect with an error.
func redirectError(w http.ResponseWriter, r *http.Request, redirect, state, code string) {
	u, _ := url.Parse(redirect) // checked against the client's
	q := url.Values{"error": {code}, "state": {state}}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}
