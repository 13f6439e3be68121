package mcptools

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// failing is a transport whose connections cannot be made.
type failing struct{ attempts *atomic.Int32 }

func (f failing) Connect(context.Context) (mcp.Connection, error) {
	f.attempts.Add(1)
	return nil, errors.New("connection refused")
}

func TestReconnectionBacksOff(t *testing.T) {
	var attempts atomic.Int32
	s, err := Server{Name: "flaky", Transport: func() mcp.Transport { return failing{&attempts} }}.check()
	require.NoError(t, err)
	c := newConn(s, func() {})
	defer c.close()

	_, err = c.call(t.Context(), "echo", nil)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, `the MCP server "flaky" could not be started: connection refused`, err.Error())
	assert.Equal(t, int32(1), attempts.Load())

	// Within the back-off, no attempt is made. (The clock is moved rather
	// than trusted: a busy machine may take a second between two calls.)
	setRetry(c, time.Now().Add(time.Hour))
	_, err = c.call(t.Context(), "echo", nil)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), `the MCP server "flaky" is unavailable (connection refused); it is tried again in`)
	assert.Equal(t, int32(1), attempts.Load())

	// Once it has passed, the next call tries again, and the back-off doubles.
	setRetry(c, time.Time{})
	_, err = c.call(t.Context(), "echo", nil)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, int32(2), attempts.Load())
	assert.Equal(t, 2, c.failures)
	assert.WithinDuration(t, time.Now().Add(2*firstBackoff), c.retryAt, 2*firstBackoff)
}

func setRetry(c *conn, at time.Time) {
	c.lock <- struct{}{}
	c.retryAt = at
	c.release()
}

func TestBackoffIsCapped(t *testing.T) {
	c := &conn{failures: 30}
	assert.Equal(t, maxBackoff, c.backoff())
}
