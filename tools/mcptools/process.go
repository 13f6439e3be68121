package mcptools

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tooluse/bedrock/tools/internal/parentdeath"
)

// commandTransport is the SDK's CommandTransport with the server in a
// process group of its own: the terminal's Ctrl-C does not reach it, and
// closing the connection also ends the processes it started (npx's node).
type commandTransport struct {
	mcp.CommandTransport
}

// Connect starts the server and connects to it. On Linux the server is
// killed when this process dies (see parentdeath).
func (t *commandTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	ownGroup(t.Command)
	var conn mcp.Connection
	release, err := parentdeath.Start(t.Command, func() (err error) {
		conn, err = t.CommandTransport.Connect(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &groupConn{Connection: conn, pgid: t.Command.Process.Pid, release: release}, nil
}

// exitedEarly is the exit status of the server, such as "exit status 1",
// if it exited of its own accord while the connection was made. A server
// that fails at once does that. It is empty if the server is still running
// or was killed (as Close kills one that does not answer).
func (t *commandTransport) exitedEarly() string {
	if ps := t.Command.ProcessState; ps != nil && ps.Exited() {
		return ps.String()
	}
	return ""
}

// groupConn kills what is left of the server's process group once the SDK
// has closed the connection: closed the server's standard input, waited for
// it to exit (signalling it if it did not) and reaped it. The SDK closes a
// connection when the session ends, when the server dies and when the
// handshake fails or times out.
type groupConn struct {
	mcp.Connection
	pgid    int
	release func() // the server's parent-death signal, once it is reaped

	once sync.Once
	err  error
}

// Close closes the connection and kills the server's process group, once.
func (c *groupConn) Close() error {
	c.once.Do(func() {
		c.err = errors.Join(c.Connection.Close(), killGroup(c.pgid))
		c.release()
	})
	return c.err
}
