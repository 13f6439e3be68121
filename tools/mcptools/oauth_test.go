package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools/mcptools"
	"github.com/tooluse/bedrock/tools/mcptools/mcpauthtest"
)

// browser is a user who consents at once: it follows the authorization URL
// and reads the code from where the authorization server redirects it,
// without a listener at the redirect URI.
func browser(t *testing.T) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		to, err := url.Parse(resp.Header.Get("Location"))
		require.NoError(t, err, "status %s", resp.Status)
		q := to.Query()
		require.Empty(t, q.Get("error"))
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state")}, nil
	}
}

// codeHandler is the SDK's authorization code handler, with dynamic client
// registration, getting its codes from fetch.
func codeHandler(t *testing.T, fetch auth.AuthorizationCodeFetcher) *auth.AuthorizationCodeHandler {
	t.Helper()
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{"http://127.0.0.1:1/callback"}, ClientName: "test",
			GrantTypes: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethod: "none"}},
		AuthorizationCodeFetcher: fetch,
	})
	require.NoError(t, err)
	return h
}

// TestOAuthAuthorizationCode: the SDK's handler discovers the
// authorization server from the 401, registers, gets a code with PKCE and
// exchanges it. An expired token is refreshed before it is sent. A token
// the server refuses (a 401) is replaced by a new authorization, and the
// call made again.
func TestOAuthAuthorizationCode(t *testing.T) {
	t.Run("refresh", func(t *testing.T) {
		as := mcpauthtest.NewServer(newTestServer(newFixture(), nil), mcpauthtest.Options{ExpiresIn: 1})
		t.Cleanup(as.Close)
		_, reg := connect(t, mcptools.Server{Name: "web", URL: as.URL, OAuth: codeHandler(t, browser(t))})
		out, err := call(t, reg, "web__echo", `{"text":"hi"}`)
		require.NoError(t, err)
		assert.JSONEq(t, `{"echo":"hi"}`, string(out.(json.RawMessage)))
		assert.Equal(t, 1, as.Count("register"))
		assert.Equal(t, 1, as.Count("authorize"))
		assert.Equal(t, 1, as.Count("authorization_code"))
		assert.Positive(t, as.Count("refresh_token"), "a token that expires within oauth2's margin is refreshed before it is sent")
	})
	t.Run("401", func(t *testing.T) {
		as := mcpauthtest.NewServer(newTestServer(newFixture(), nil), mcpauthtest.Options{})
		t.Cleanup(as.Close)
		_, reg := connect(t, mcptools.Server{Name: "web", URL: as.URL, OAuth: codeHandler(t, browser(t))})
		_, err := call(t, reg, "web__echo", `{"text":"hi"}`)
		require.NoError(t, err)
		as.Expire()
		_, err = call(t, reg, "web__echo", `{"text":"again"}`)
		require.NoError(t, err, "authorized again, and the call made again")
		assert.Equal(t, 2, as.Count("authorize"))
	})
}

func TestOAuthClientCredentials(t *testing.T) {
	as := mcpauthtest.NewServer(newTestServer(newFixture(), nil), mcpauthtest.Options{ClientID: "robot", ClientSecret: "s3cret"})
	t.Cleanup(as.Close)
	h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
		Credentials: &oauthex.ClientCredentials{ClientID: "robot", ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: "s3cret"}}})
	require.NoError(t, err)
	_, reg := connect(t, mcptools.Server{Name: "svc", URL: as.URL, OAuth: h})
	_, err = call(t, reg, "svc__echo", `{"text":"hi"}`)
	require.NoError(t, err)
	as.Expire()
	_, err = call(t, reg, "svc__echo", `{"text":"again"}`)
	require.NoError(t, err)
	assert.Equal(t, 2, as.Count("client_credentials"))
	assert.Zero(t, as.Count("authorize"))
}

// TestOAuthFailureIsSaid: an authorization that fails fails the
// connection, saying why, and not with the SDK's "rejected by transport".
func TestOAuthFailureIsSaid(t *testing.T) {
	as := mcpauthtest.NewServer(newTestServer(newFixture(), nil), mcpauthtest.Options{})
	t.Cleanup(as.Close)
	declined := errors.New("the user declined")
	h := codeHandler(t, func(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		return nil, declined
	})
	b, err := mcptools.Connect(t.Context(), nil, mcptools.Server{Name: "web", URL: as.URL, OAuth: h})
	if b != nil {
		_ = b.Close()
	}
	require.ErrorIs(t, err, mcptools.ErrUnavailable)
	assert.Contains(t, err.Error(), `"web"`)
	assert.Contains(t, err.Error(), "its authorization failed (the user declined)")
	assert.NotContains(t, err.Error(), "rejected by transport")
}

func TestOAuthIsForAURL(t *testing.T) {
	_, err := mcptools.Connect(t.Context(), nil, mcptools.Server{Name: "p", Command: []string{"true"}, OAuth: codeHandler(t, browser(t))})
	assert.ErrorContains(t, err, `mcptools: server "p": OAuth is for a URL`)
}
