package agentcore_test

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
)

// pipeListener hands a server the ends of net.Pipes, whose deadlines run
// in a synctest bubble's time.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { close(l.done); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// TestSlowBodyIsCutOff: a caller that sends its body a byte at a time, more
// slowly than Options.BodyTimeout allows, is answered 408 and its
// connection closed, in a bubble's time.
func TestSlowBodyIsCutOff(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script())
	defer bed.Close()
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		h := agentcore.New(bed.Client(), model, registry(t), func(o *agentcore.Options) {
			o.Store = filestore.Store{Dir: dir}
			o.Logger = slog.New(slog.DiscardHandler)
		})
		ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
		srv := &http.Server{Handler: h}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()

		caller, conn := net.Pipe()
		defer caller.Close()
		ln.conns <- conn
		_, err := io.WriteString(caller, "POST /invocations HTTP/1.1\r\nHost: agent\r\n"+agentcore.SessionHeader+": "+session+"\r\nContent-Length: 100\r\n\r\n{")
		require.NoError(t, err)
		trickled := make(chan int)
		go func() {
			for n := 1; ; n++ { // a byte every 4 s, until the server hangs up
				time.Sleep(4 * time.Second)
				if _, err := io.WriteString(caller, " "); err != nil {
					trickled <- n
					return
				}
			}
		}()
		start := time.Now()
		resp, err := http.ReadResponse(bufio.NewReader(caller), nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
		assert.Equal(t, 10*time.Second, time.Since(start), "at the deadline, in the bubble's time")
		assert.Contains(t, string(body), "the body did not arrive within 10s")
		assert.Equal(t, 3, <-trickled, "the byte after the deadline finds the connection closed")
		assert.True(t, resp.Close || strings.EqualFold(resp.Header.Get("Connection"), "close"), "the connection is closed")
	})
	assert.Empty(t, bed.Requests())
}
