package mcpauthtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
	"github.com/tooluse/bedrock/tools/mcptools/mcpauthtest"
)

// consent is a user who authorizes at once: it follows the authorization
// URL and reads the code where the authorization server redirects.
func consent(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	return &auth.AuthorizationResult{Code: back.Query().Get("code"), State: back.Query().Get("state")}, nil
}

// An MCP server behind OAuth, reached by mcptools with the go-sdk's
// authorization code handler: discovery, registration, PKCE.
func Example() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Name string `json:"name"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + in.Name}}}, nil, nil
	})
	as := mcpauthtest.NewServer(srv, mcpauthtest.Options{})
	defer as.Close()

	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{"http://127.0.0.1:8085/callback"}, TokenEndpointAuthMethod: "none"}},
		AuthorizationCodeFetcher: consent,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := new(tools.Registry)
	bridge, err := mcptools.Connect(context.Background(), reg, mcptools.Server{Name: "greeter", URL: as.URL, OAuth: handler})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bridge.Close()
	greet, _ := reg.Lookup("greeter__greet")
	out, err := greet.Call(context.Background(), []byte(`{"name":"Ada"}`))
	fmt.Println(out, err)
	fmt.Println("registered:", as.Count("register"), "authorized:", as.Count("authorize"), "codes exchanged:", as.Count("authorization_code"))
	// Output:
	// hello Ada <nil>
	// registered: 1 authorized: 1 codes exchanged: 1
}
