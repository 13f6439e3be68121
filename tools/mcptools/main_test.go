package mcptools_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
)

// serverEnv, set to "1", makes the test binary an MCP server on stdio.
const serverEnv = "MCPTOOLS_TEST_SERVER"

// The roles of the test binary re-executed, by the value of serverEnv.
const (
	// asServer serves the test tools.
	asServer = "1"
	// asParent starts a child (asChild), reports "server PID child PID" on
	// standard error, and serves.
	asParent = "parent"
	// asMute starts a child and reports as asParent does, then reads its
	// input to the end without answering.
	asMute = "mute"
	// asChild ignores SIGTERM, says so on standard output, and sleeps.
	asChild = "child"
)

func TestMain(m *testing.M) {
	switch os.Getenv(serverEnv) {
	case asParent, asMute:
		child, err := startChild()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "server %d child %d\n", os.Getpid(), child)
		if os.Getenv(serverEnv) == asMute {
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(0)
		}
		fallthrough
	case asServer:
		err := newTestServer(newFixture(), nil).Run(context.Background(), &mcp.StdioTransport{})
		if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case asChild:
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		for {
			time.Sleep(time.Hour)
		}
	}
	goleak.VerifyTestMain(m)
}

// startChild starts the test binary as a child that ignores SIGTERM, and
// returns its pid once it does. Its standard streams are not the server's.
func startChild() (int, error) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{serverEnv + "=" + asChild}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		return 0, fmt.Errorf("child: %w", err)
	}
	return cmd.Process.Pid, nil
}

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

// fixture is what the test server's tools share with a test.
type fixture struct {
	stalled   chan struct{} // a value each time the stall tool starts
	cancelled chan struct{} // a value each time the stall tool sees its call cancelled
	release   chan struct{} // closed to end the calls of the stall and wait tools
	closeOnce sync.Once
	echoes    atomic.Int32

	// the wait tool: calls in flight, their high-water mark, and a value
	// when the high-water mark reaches waitLimit
	inFlight, high atomic.Int32
	waitLimit      int32
	reached        chan struct{}
}

func newFixture() *fixture {
	return &fixture{stalled: make(chan struct{}, 16), cancelled: make(chan struct{}, 16), release: make(chan struct{}), reached: make(chan struct{}, 1)}
}

func (f *fixture) done() { f.closeOnce.Do(func() { close(f.release) }) }

// newTestServer makes a server with the test tools, pageSize tools a page
// if opts says so.
func newTestServer(f *fixture, opts *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes its text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			f.echoes.Add(1)
			return nil, echoOut{Echo: in.Text}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Returns the server's process id."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct {
			PID int `json:"pid"`
		}, error) {
			return nil, struct {
				PID int `json:"pid"`
			}{os.Getpid()}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "Ends the server's process."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the disk is full")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "stall", Description: "Waits for its cancellation or the test's end."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in struct {
			IgnoreCancel bool `json:"ignoreCancel,omitempty"`
		}) (*mcp.CallToolResult, any, error) {
			f.stalled <- struct{}{}
			if in.IgnoreCancel {
				<-f.release
				return nil, nil, nil
			}
			select {
			case <-ctx.Done():
				f.cancelled <- struct{}{}
			case <-f.release:
			}
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "Counts the calls in flight and waits for the test's end."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			n := f.inFlight.Add(1)
			defer f.inFlight.Add(-1)
			for high := f.high.Load(); n > high && !f.high.CompareAndSwap(high, n); high = f.high.Load() {
			}
			if n == f.waitLimit {
				select { // once is enough: after the release, later calls can reach it again
				case f.reached <- struct{}{}:
				default:
				}
			}
			<-f.release
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Returns the server's environment."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(os.Environ(), "\n")}}}, nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "content", Description: "Returns the content it is given.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"kind":{"type":"string"}},"required":["kind"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Kind string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return contentResult(in.Kind), nil
		})
	return s
}

// onePixelPNG is a PNG image, which the executor reads to check its size.
var onePixelPNG = func() []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

// contentResult is a result of each kind the bridge maps.
func contentResult(kind string) *mcp.CallToolResult {
	switch kind {
	case "image":
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "a chart"},
			&mcp.ImageContent{MIMEType: "image/png", Data: onePixelPNG},
		}}
	case "image only":
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/webp", Data: []byte("WEBP")}}}
	case "others":
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
			&mcp.ImageContent{MIMEType: "image/svg+xml", Data: []byte("<svg/>")},
			&mcp.ResourceLink{URI: "file:///tmp/a.txt", Name: "a"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///tmp/b.bin", MIMEType: "application/octet-stream", Blob: []byte{1}}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///tmp/c.txt", MIMEType: "text/plain", Text: "inline text"}},
		}}
	case "document":
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///tmp/report.pdf", MIMEType: "application/pdf", Blob: []byte("%PDF")}},
		}}
	case "structured":
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"n":1}`}}, StructuredContent: map[string]any{"n": 1}}
	case "structured array":
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "[1,2]"}}, StructuredContent: []any{1, 2}}
	case "structured number alone":
		return &mcp.CallToolResult{StructuredContent: 42}
	case "error":
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such file"}}}
	case "silent error":
		return &mcp.CallToolResult{IsError: true}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "two"}, &mcp.TextContent{Text: "lines"}}}
}

// inMemory describes a server reached over an in-memory transport; each
// connection gets a session of srv.
func inMemory(t *testing.T, name string, srv *mcp.Server) mcptools.Server {
	t.Helper()
	return mcptools.Server{Name: name, Transport: func() mcp.Transport {
		client, server := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), server, nil)
		assert.NoError(t, err, "server connect")
		t.Cleanup(func() { _ = ss.Close() })
		return client
	}}
}

// connect connects to servers, adding their tools to a new registry, and
// closes the bridge at the end of the test.
func connect(t *testing.T, servers ...mcptools.Server) (*mcptools.Bridge, *tools.Registry) {
	t.Helper()
	reg := new(tools.Registry)
	b, err := mcptools.Connect(context.Background(), reg, servers...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	return b, reg
}

// call calls the registry's tool name with input.
func call(t *testing.T, reg *tools.Registry, name, input string) (any, error) {
	t.Helper()
	tool, ok := reg.Lookup(name)
	require.True(t, ok, "no tool %q in %v", name, reg.Names())
	return tool.Call(context.Background(), json.RawMessage(input))
}
