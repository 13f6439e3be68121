package mcptools

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The transport that adds the server's headers, above a SigV4, sends a
// request only to the server's origin (scheme, host and port), however it
// is spelled. A request elsewhere, however it was made, leaves with
// neither the headers nor a signature.
func TestCredentialsGoOnlyToTheServersOrigin(t *testing.T) {
	u, err := url.Parse("https://mcp.example.com/mcp")
	require.NoError(t, err)
	var sent []string
	signer := &SigV4{Credentials: credentials.StaticCredentialsProvider{Value: aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "s", SessionToken: "tok"}},
		Service: "bedrock-agentcore", Region: "us-east-1", Next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent = append(sent, r.URL.String())
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
		})}
	tr := httpTransport{origin: origin(u), headers: map[string]string{"Authorization": "Bearer secret"}, limit: 1 << 10, next: signer}
	for _, tt := range []struct {
		url  string
		sent bool
	}{
		{"https://mcp.example.com/mcp", true},
		{"https://MCP.Example.com:443/mcp?session=1", true},
		{"http://mcp.example.com/mcp", false},
		{"https://mcp.example.com:8443/mcp", false},
		{"https://other.example.com/mcp", false},
		{"https://mcp.example.com.other.example/mcp", false},
	} {
		sent = nil
		req, err := http.NewRequest(http.MethodGet, tt.url, nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		if !tt.sent {
			require.Error(t, err, tt.url)
			assert.Contains(t, err.Error(), "not to the server's origin https://mcp.example.com: refused")
			assert.Empty(t, sent, tt.url)
			continue
		}
		require.NoError(t, err, tt.url)
		resp.Body.Close()
		assert.Equal(t, []string{tt.url}, sent)
	}
}
