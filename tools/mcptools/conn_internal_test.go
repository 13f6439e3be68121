package mcptools

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An unknown tool is a Go error in the SDK (a JSON-RPC error): the call gets
// an error result and the session stays.
func TestUnknownToolIsAnErrorResult(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "empty", Version: "1"}, nil)
	var sessions []*mcp.ServerSession
	s, err := Server{Name: "empty", Transport: func() mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), server, nil)
		require.NoError(t, err)
		sessions = append(sessions, ss)
		return client
	}}.check()
	require.NoError(t, err)
	c := newConn(s, func() {})
	defer c.close()

	for range 2 {
		_, err = c.call(t.Context(), "nope", nil)
		require.ErrorIs(t, err, ErrToolFailed)
		assert.Equal(t, `the MCP server "empty" refused the call: unknown tool "nope"`, err.Error())
	}
	assert.Len(t, sessions, 1, "the session stays")
}
