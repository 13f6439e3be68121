package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools/mcptools"
)

func TestMCPAuth(t *testing.T) {
	t.Setenv("GATEWAY_TOKEN", "tok-123")
	t.Setenv("EMPTY_TOKEN", "")
	servers, err := parseMCP([]byte(`{"mcpServers": {
		"gateway": {"url": "https://gw.example.com/mcp", "auth": {"type": "sigv4", "service": "bedrock-agentcore", "region": "us-east-1", "profile": "tools"}},
		"oauth": {"url": "https://mcp.example.com/mcp", "headers": {"X-Team": "a"}, "auth": {"type": "bearer", "tokenEnv": "GATEWAY_TOKEN"}},
		"local": {"url": "http://127.0.0.1:9/mcp", "auth": {"type": "bearer", "tokenEnv": "GATEWAY_TOKEN"}}
	}}`), t.TempDir())
	require.NoError(t, err)
	require.Len(t, servers, 3)
	gateway, local, oauth := servers[0], servers[1], servers[2]
	require.NotNil(t, gateway.HTTPClient)
	sig, ok := gateway.HTTPClient.Transport.(*mcptools.SigV4)
	require.True(t, ok, "signed with SigV4")
	assert.Equal(t, "bedrock-agentcore", sig.Service)
	assert.Equal(t, "us-east-1", sig.Region)
	assert.NotNil(t, sig.Credentials)
	assert.Equal(t, map[string]string{"X-Team": "a", "Authorization": "Bearer tok-123"}, oauth.Headers)
	assert.Equal(t, "Bearer tok-123", local.Headers["Authorization"], "plain http on loopback")
	assert.Nil(t, oauth.HTTPClient)

	for _, tc := range []struct{ name, auth, url, want string }{
		{"unknown type", `{"type": "saml"}`, "https://x/mcp", `"auth": "type" "saml": want "sigv4", "bearer", "oauth" or "clientCredentials"`},
		{"sigv4 without a region", `{"type": "sigv4", "service": "bedrock-agentcore"}`, "https://x/mcp", `"sigv4" wants "service" and "region"`},
		{"bearer without tokenEnv", `{"type": "bearer"}`, "https://x/mcp", `"bearer" wants "tokenEnv"`},
		{"bearer with a token in the file", `{"type": "bearer", "token": "x"}`, "https://x/mcp", `unknown field "token"`},
		{"unset variable", `{"type": "bearer", "tokenEnv": "NOT_SET_ANYWHERE_27"}`, "https://x/mcp", `"tokenEnv" "NOT_SET_ANYWHERE_27": the variable is not set`},
		{"empty variable", `{"type": "bearer", "tokenEnv": "EMPTY_TOKEN"}`, "https://x/mcp", `the variable is not set`},
		{"bearer in the clear", `{"type": "bearer", "tokenEnv": "GATEWAY_TOKEN"}`, "http://mcp.example.com/mcp", `would send the token in the clear`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseMCP([]byte(`{"mcpServers": {"a": {"url": "`+tc.url+`", "auth": `+tc.auth+`}}}`), t.TempDir())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), `"a"`, "the server is named")
			assert.NotContains(t, err.Error(), "tok-123")
		})
	}
	_, err = parseMCP([]byte(`{"mcpServers": {"a": {"command": "sh", "auth": {"type": "bearer", "tokenEnv": "GATEWAY_TOKEN"}}}}`), t.TempDir())
	assert.ErrorContains(t, err, `"auth" is for a "url"`)
	_, err = parseMCP([]byte(`{"mcpServers": {"a": {"url": "https://x/mcp", "headers": {"authorization": "Bearer y"}, "auth": {"type": "bearer", "tokenEnv": "GATEWAY_TOKEN"}}}}`), t.TempDir())
	assert.ErrorContains(t, err, `"bearer" and an "Authorization" header`)
}
