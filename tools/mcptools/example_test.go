package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// The tools of an MCP server, here one in the same process, join a
// registry; a real one is a Command or a URL.
func ExampleConnect() {
	server := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "Greets someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Name string `json:"name"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name + "!"}}}, nil, nil
		})

	ctx := context.Background()
	reg := new(tools.Registry)
	bridge, err := mcptools.Connect(ctx, reg, mcptools.Server{
		Name: "greeter",
		Transport: func() mcp.Transport {
			client, serverSide := mcp.NewInMemoryTransports()
			_, _ = server.Connect(ctx, serverSide, nil)
			return client
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bridge.Close()

	fmt.Println(reg.Names())
	greet, _ := reg.Lookup("greeter__greet")
	out, err := greet.Call(ctx, json.RawMessage(`{"name":"Ada"}`))
	fmt.Println(out, err)
	// Output:
	// [greeter__greet]
	// Hello, Ada! <nil>
}
