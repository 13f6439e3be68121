package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/mcptools"
)

func TestListsEveryPage(t *testing.T) {
	srv := newTestServer(newFixture(), &mcp.ServerOptions{PageSize: 2})
	b, reg := connect(t, inMemory(t, "mem", srv))
	want := []string{"mem__content", "mem__die", "mem__echo", "mem__env", "mem__fail", "mem__pid", "mem__stall", "mem__wait"}
	assert.ElementsMatch(t, want, reg.Names())
	assert.Len(t, b.Tools(), len(want))
	assert.Equal(t, []mcptools.ServerTools{{Name: "mem", Tools: len(want)}}, b.Servers())
	assert.Empty(t, b.Warnings())

	echo, ok := reg.Lookup("mem__echo")
	require.True(t, ok)
	assert.Equal(t, "Echoes its text.", echo.Description())
	assert.Equal(t, mcptools.DefaultTimeout, echo.Timeout())
	assert.JSONEq(t, `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`, string(echo.InputSchema()))
}

func TestIncludeExclude(t *testing.T) {
	f := newFixture()
	only := inMemory(t, "only", newTestServer(f, nil))
	only.Include = []string{"echo", "pid"}
	but := inMemory(t, "but", newTestServer(f, nil))
	but.Exclude = []string{"die", "stall", "wait", "content", "fail", "env"}
	_, reg := connect(t, only, but)
	assert.Equal(t, []string{"only__echo", "only__pid"}, sortedNames(reg, "only__"))
	assert.Equal(t, []string{"but__echo", "but__pid"}, sortedNames(reg, "but__"))
}

func TestNamesCleanedAndCollisionsResolved(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	}
	for _, name := range []string{"read.file", "read_file", "a-very-long-tool-name-that-goes-on-and-on-and-on-and-on-and-on"} {
		mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "A tool."}, noop)
	}
	taken, err := tools.New("my_srv__read_file_2", "Taken already.", func(context.Context, struct{}) (string, error) { return "", nil })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(taken)
	require.NoError(t, err)
	b, err := mcptools.Connect(context.Background(), reg, inMemory(t, "my srv", srv))
	require.NoError(t, err)
	defer b.Close()

	names := sortedNames(reg, "my_srv__")
	assert.Equal(t, []string{
		"my_srv__a-very-long-tool-name-that-goes-on-and-on-and-on-and-on-",
		"my_srv__read_file", "my_srv__read_file_2", "my_srv__read_file_3",
	}, names)
	for _, n := range names {
		assert.LessOrEqual(t, len(n), 64)
	}
	warnings := b.Warnings()
	require.Len(t, warnings, 1)
	assert.ErrorIs(t, warnings[0], mcptools.ErrRenamed)
	assert.Contains(t, warnings[0].Error(), `"my_srv__read_file_3"`)
}

func TestRejectedSchemaIsReported(t *testing.T) {
	srv := newTestServer(newFixture(), nil)
	srv.AddTool(&mcp.Tool{Name: "bad", Description: "Has a bad schema.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":"zero"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	b, reg := connect(t, inMemory(t, "mem", srv))
	_, ok := reg.Lookup("mem__bad")
	assert.False(t, ok)
	warnings := b.Warnings()
	require.Len(t, warnings, 1)
	assert.ErrorIs(t, warnings[0], mcptools.ErrSkipped)
	assert.ErrorIs(t, warnings[0], tools.ErrInvalidTool)
	assert.Contains(t, warnings[0].Error(), `tool "bad"`)
}

func TestInputValidatedBeforeTheServer(t *testing.T) {
	f := newFixture()
	_, reg := connect(t, inMemory(t, "mem", newTestServer(f, nil)))
	_, err := call(t, reg, "mem__echo", `{"text": 3}`)
	var inputErr *tools.InputError
	require.ErrorAs(t, err, &inputErr)
	assert.Equal(t, int32(0), f.echoes.Load(), "the server never saw the call")

	out, err := call(t, reg, "mem__echo", `{"text":"hi"}`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"echo":"hi"}`, string(out.(json.RawMessage)))
}

func TestResults(t *testing.T) {
	_, reg := connect(t, inMemory(t, "mem", newTestServer(newFixture(), nil)))
	tests := []struct {
		kind    string
		want    any
		wantErr string
	}{
		{kind: "text", want: "two\nlines"},
		{kind: "structured", want: json.RawMessage(`{"n":1}`)},
		{kind: "structured array", want: json.RawMessage(`[1,2]`)},
		{kind: "structured number alone", want: json.RawMessage(`42`)},
		{kind: "image", want: tools.Result{Output: "a chart", Media: []tools.Media{{Type: "image/png", Data: onePixelPNG}}}},
		{kind: "image only", want: tools.Result{Media: []tools.Media{{Type: "image/webp", Data: []byte("WEBP")}}}},
		{kind: "document", want: tools.Result{Media: []tools.Media{{Type: "application/pdf", Name: "report.pdf", Data: []byte("%PDF")}}}},
		{kind: "others", want: "[audio/wav content left out]\n[image/svg+xml content left out]\n" +
			"[a link to the resource file:///tmp/a.txt left out]\n[application/octet-stream content left out]\ninline text"},
		{kind: "error", wantErr: "no such file"},
		{kind: "silent error", wantErr: "the tool reported an error without saying why"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			out, err := call(t, reg, "mem__content", fmt.Sprintf(`{"kind":%q}`, tt.kind))
			if tt.wantErr != "" {
				require.ErrorIs(t, err, mcptools.ErrToolFailed)
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
		})
	}
	t.Run("handler error", func(t *testing.T) {
		_, err := call(t, reg, "mem__fail", `{}`)
		require.ErrorIs(t, err, mcptools.ErrToolFailed)
		assert.EqualError(t, err, "the disk is full")
	})
}

func TestStalledCallTimesOutAndTheNextWorks(t *testing.T) {
	f := newFixture()
	s := inMemory(t, "mem", newTestServer(f, nil))
	s.Timeout = 50 * time.Millisecond // the handler never answers: no margin to flake on
	_, reg := connect(t, s)
	t.Cleanup(f.done)

	_, err := call(t, reg, "mem__stall", `{"ignoreCancel":true}`)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, `the call to the MCP server "mem" timed out`)

	out, err := call(t, reg, "mem__echo", `{"text":"still here"}`)
	require.NoError(t, err)
	assert.JSONEq(t, `{"echo":"still here"}`, string(out.(json.RawMessage)))
}

func TestCancellationReachesTheServer(t *testing.T) {
	f := newFixture()
	_, reg := connect(t, inMemory(t, "mem", newTestServer(f, nil)))
	t.Cleanup(f.done)
	tool, _ := reg.Lookup("mem__stall")

	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignored=%v", ignore), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := tool.Call(ctx, json.RawMessage(fmt.Sprintf(`{"ignoreCancel":%v}`, ignore)))
				errc <- err
			}()
			<-f.stalled
			cancel()
			err := <-errc // returns though a server that ignores the cancellation never answers
			require.ErrorIs(t, err, context.Canceled)
			assert.EqualError(t, err, `the call to the MCP server "mem" was cancelled`)
			if !ignore {
				<-f.cancelled // notifications/cancelled reached the handler
			}
		})
	}
}

func TestConcurrencyBoundedPerServer(t *testing.T) {
	const limit, calls = 2, 8
	f := newFixture()
	f.waitLimit = limit
	s := inMemory(t, "mem", newTestServer(f, nil))
	s.Concurrency = limit
	_, reg := connect(t, s)
	t.Cleanup(f.done)

	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			_, err := call(t, reg, "mem__wait", `{}`)
			assert.NoError(t, err)
		})
	}
	<-f.reached
	f.done()
	wg.Wait()
	assert.Equal(t, int32(limit), f.high.Load())
}

func TestListChanged(t *testing.T) {
	f := newFixture()
	srv := newTestServer(f, nil)
	b, reg := connect(t, inMemory(t, "mem", srv))

	srv.RemoveTools("echo")
	mcp.AddTool(srv, &mcp.Tool{Name: "late", Description: "Added later."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
		})
	require.Eventually(t, func() bool {
		_, added := reg.Lookup("mem__late")
		_, offered := b.Annotations("mem__echo")
		return added && !offered
	}, 10*time.Second, 5*time.Millisecond)

	out, err := call(t, reg, "mem__late", `{}`)
	require.NoError(t, err)
	assert.Equal(t, "late", out)
	_, err = call(t, reg, "mem__echo", `{"text":"x"}`)
	require.ErrorIs(t, err, mcptools.ErrNotOffered)
	assert.EqualError(t, err, `the tool "mem__echo" is no longer offered by its MCP server`)
	assert.NotContains(t, toolNames(b.Tools()), "mem__echo")
}

// A server's annotations are believed only if it is trusted: an untrusted
// one that calls a tool read-only does not get it run unasked.
func TestAnnotationsAndApproval(t *testing.T) {
	tests := []struct {
		trusted     bool
		echo, die   mcptools.Annotations
		approveEcho bool
	}{
		{true, mcptools.Annotations{ReadOnly: true, OpenWorld: true}, mcptools.Annotations{Destructive: true, OpenWorld: true}, false},
		{false, mcptools.Annotations{Destructive: true, OpenWorld: true}, mcptools.Annotations{Destructive: true, OpenWorld: true}, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("trusted=%v", tt.trusted), func(t *testing.T) {
			s := inMemory(t, "mem", newTestServer(newFixture(), nil))
			s.TrustAnnotations = tt.trusted
			s.ApprovalPolicy = func(_ string, a mcptools.Annotations) bool { return a.Destructive }
			b, reg := connect(t, s)

			a, ok := b.Annotations("mem__echo")
			require.True(t, ok)
			assert.Equal(t, tt.echo, a, "echo declares itself read-only")
			a, ok = b.Annotations("mem__die")
			require.True(t, ok)
			assert.Equal(t, tt.die, a, "the protocol's defaults")
			_, ok = b.Annotations("mem__nope")
			assert.False(t, ok)

			echo, _ := reg.Lookup("mem__echo")
			die, _ := reg.Lookup("mem__die")
			assert.Equal(t, tt.approveEcho, echo.RequiresApproval())
			assert.True(t, die.RequiresApproval())
		})
	}
}

func TestConnectFailureNamesTheServer(t *testing.T) {
	tests := []struct {
		name   string
		server mcptools.Server
		want   string
	}{
		{"no name", mcptools.Server{Command: []string{"x"}}, "mcptools: a server without a name"},
		{"two ways", mcptools.Server{Name: "s", Command: []string{"x"}, URL: "http://x"}, `mcptools: server "s": set exactly one of Command, URL and Transport`},
		{"missing program", mcptools.Server{Name: "s", Command: []string{"/nonexistent/mcp-server"}}, `mcptools: server "s": the MCP server "s" could not be started`},
		{"not found", mcptools.Server{Name: "s", Command: []string{"no-such-mcp-server-here"}}, `mcptools: server "s": the MCP server "s" could not be started: the program "no-such-mcp-server-here" was not found`},
		{"exits at once", mcptools.Server{Name: "s", Command: []string{"/bin/false"}}, `mcptools: server "s": the MCP server "s" could not be started: the server process exited before it answered (exit status 1)`},
		{"exits with a status", mcptools.Server{Name: "s", Command: []string{"/bin/sh", "-c", "exit 3"}}, `mcptools: server "s": the MCP server "s" could not be started: the server process exited before it answered (exit status 3)`},
		// It exits as well, once its input is closed: the answer is the news.
		{"answers what is not JSON", mcptools.Server{Name: "s", Command: []string{"/bin/sh", "-c", "read line; echo '{not json'"}}, `mcptools: server "s": the MCP server "s" could not be started: the server's answer was not valid JSON-RPC (invalid character 'n' looking for beginning of object key string)`},
		{"url without a host", mcptools.Server{Name: "s", URL: "http://"}, `mcptools: server "s": URL "http://": want an http or https URL with a host`},
		{"url of another scheme", mcptools.Server{Name: "s", URL: "ftp://x"}, `mcptools: server "s": URL "ftp://x": want an http or https URL with a host`},
		{"silent", mcptools.Server{Name: "s", StartupTimeout: 50 * time.Millisecond, Transport: silent}, `mcptools: server "s": the MCP server "s" could not be started: no answer within 50ms`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := mcptools.Connect(context.Background(), nil, tt.server)
			require.Error(t, err)
			assert.Nil(t, b)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// silent is a transport to a server that never answers.
func silent() mcp.Transport {
	client, server := mcp.NewInMemoryTransports()
	go func() {
		conn, err := server.Connect(context.Background())
		if err != nil {
			return
		}
		for {
			if _, err := conn.Read(context.Background()); err != nil {
				_ = conn.Close()
				return
			}
		}
	}()
	return client
}

func sortedNames(reg *tools.Registry, prefix string) []string {
	var names []string
	for _, n := range reg.Names() {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

func toolNames(ts []*tools.Tool) []string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name()
	}
	return names
}

// A failure does not wait for the other servers' starts: a silent server
// with an hour to answer would hold Connect for that hour.
func TestConnectFailureStopsTheOtherStarts(t *testing.T) {
	b, err := mcptools.Connect(context.Background(), nil,
		mcptools.Server{Name: "silent", StartupTimeout: time.Hour, Transport: silent},
		mcptools.Server{Name: "missing", Command: []string{"no-such-mcp-server-here"}},
	)
	require.Error(t, err)
	assert.Nil(t, b)
	assert.Contains(t, err.Error(), `mcptools: server "missing": `)
}

// TestProgress: with Server.Progress, a call is sent with a progress token
// and the server's notifications for it arrive, while it runs, with the
// call's id, in order, the server's text as it came.
func TestProgress(t *testing.T) {
	heard, ended := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(ended) })
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "progress", Description: "Reports its progress twice, then answers."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, echoOut, error) {
			for i, msg := range []string{"half way", "\x1b[2Jdone"} {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(),
					Progress: float64(i + 1), Total: 2, Message: msg}); err != nil {
					return nil, echoOut{}, err
				}
			}
			select { // answers once its notifications were heard: while it ran
			case <-heard:
			case <-ended:
			}
			return nil, echoOut{Echo: "finished"}, nil
		})
	var mu sync.Mutex
	var got []mcptools.Progress
	srv := inMemory(t, "s", server)
	srv.Progress = func(p mcptools.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if got = append(got, p); len(got) == 2 {
			close(heard)
		}
	}
	_, reg := connect(t, srv)
	tool, ok := reg.Lookup("s__progress")
	require.True(t, ok)
	out, err := tool.Call(tools.WithCallID(context.Background(), "tooluse_7"), json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Contains(t, fmt.Sprintf("%s", out), "finished")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []mcptools.Progress{
		{Server: "s", Tool: "progress", CallID: "tooluse_7", Progress: 1, Total: 2, Message: "half way"},
		{Server: "s", Tool: "progress", CallID: "tooluse_7", Progress: 2, Total: 2, Message: "\x1b[2Jdone"},
	}, got, "untrusted text, for the caller to show safely")
}
