package mcptools_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/tooluse/bedrock/tools/mcptools"
)

// TestRedirectsAreRefused: a server that answers 307 to another host, or
// from https to http, gets no request sent there. So neither its bearer
// token nor a SigV4 signature made for that host (access key id, session
// token) leaves for it. The connection fails, saying why. The caller's
// client, which has no CheckRedirect, is left as it was.
func TestRedirectsAreRefused(t *testing.T) {
	var seen, leaked atomic.Int32
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newTestServer(newFixture(), nil) }, nil)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Amz-Security-Token") != "" {
			leaked.Add(1)
		}
		handler.ServeHTTP(w, r)
	}))
	defer elsewhere.Close()
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	plain, secure := httptest.NewServer(redirect), httptest.NewTLSServer(redirect)
	defer plain.Close()
	defer secure.Close()

	bearer := func(from *httptest.Server) mcptools.Server {
		return mcptools.Server{Name: "web", URL: from.URL + "/mcp", HTTPClient: from.Client(),
			Headers: map[string]string{"Authorization": "Bearer secret"}}
	}
	signed := func(from *httptest.Server) mcptools.Server {
		creds := aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", SessionToken: "session-token"}
		return mcptools.Server{Name: "web", URL: from.URL + "/mcp", HTTPClient: &http.Client{Transport: &mcptools.SigV4{
			Credentials: credentials.StaticCredentialsProvider{Value: creds},
			Service:     "bedrock-agentcore", Region: "us-east-1", Next: from.Client().Transport}}}
	}
	oauthed := func(from *httptest.Server) mcptools.Server {
		return mcptools.Server{Name: "web", URL: from.URL + "/mcp", HTTPClient: from.Client(), OAuth: staticToken("secret")}
	}
	for _, tt := range []struct {
		name string
		srv  mcptools.Server
	}{
		{"bearer to another host", bearer(plain)},
		{"oauth token to another host", oauthed(plain)},
		{"oauth token from https to http", oauthed(secure)},
		{"sigv4 to another host", signed(plain)},
		{"bearer from https to http", bearer(secure)},
		{"sigv4 from https to http", signed(secure)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := mcptools.Connect(context.Background(), nil, tt.srv)
			if b != nil {
				_ = b.Close()
			}
			assert.Zero(t, seen.Load(), "requests to the other host")
			assert.Zero(t, leaked.Load(), "credentials sent to the other host")
			require.Error(t, err)
			assert.Contains(t, err.Error(), `"web"`)
			assert.Contains(t, err.Error(), "redirected to "+elsewhere.URL+": refused; streamable HTTP needs no redirects")
			assert.Nil(t, tt.srv.HTTPClient.CheckRedirect, "the caller's client is not changed")
		})
	}
}

// staticToken is an OAuth handler with one token, which cannot authorize.
type staticToken string

func (s staticToken) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: string(s)}), nil
}

func (staticToken) Authorize(context.Context, *http.Request, *http.Response) error {
	return errors.New("no authorization")
}
