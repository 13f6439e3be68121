package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/dynamostore"
	"github.com/tooluse/bedrock/converse/dynamostore/dynamotest"
)

// served is a converse serve running in process.
type served struct {
	url    string
	stop   func() error
	copied chan struct{} // closed once stderr's last line is in log
	log    strings.Builder
}

// stderr is what the server wrote to standard error after its first line,
// once it has stopped.
func (s *served) stderr(t *testing.T) string {
	t.Helper()
	require.NoError(t, s.stop())
	<-s.copied
	return s.log.String()
}

// startServe runs converse serve with args on a free port of loopback and
// returns once it listens.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"serve", "-addr", "127.0.0.1:0"}, args...), nil, io.Discard, pw)
		pw.Close()
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	require.True(t, lines.Scan(), "converse serve said nothing")
	addr := regexp.MustCompile(`on (http://\S+) `).FindStringSubmatch(lines.Text())
	require.Len(t, addr, 2, "the first line names the address: %s", lines.Text())
	s := &served{url: addr[1], stop: sync.OnceValue(func() error { cancel(); return <-done }), copied: make(chan struct{})}
	go func() {
		defer close(s.copied)
		for lines.Scan() {
			s.log.WriteString(lines.Text() + "\n")
		}
		_, _ = io.Copy(io.Discard, pr) // past a line too long to scan
	}()
	t.Cleanup(func() { _ = s.stop() })
	return s
}

func (s *served) invoke(t *testing.T, session, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+"/invocations", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(agentcore.SessionHeader, session)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var a map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", a)
	return a
}

// TestServe: converse serve answers the runtime's calls, and a session
// goes on across invocations and across a restart of the server.
func TestServe(t *testing.T) {
	setTestEnv(t)
	bed := newServer(t, bedrocktest.Script(bedrocktest.Text("one"), bedrocktest.Text("two"), bedrocktest.Text("three")))
	dir := t.TempDir()
	args := []string{"-endpoint", bed.URL, "-sessions", dir, "-system", "Be brief."}
	const session = "0123456789abcdef0123456789abcdef-cli"

	s := startServe(t, args...)
	resp, err := http.Get(s.url + "/ping")
	require.NoError(t, err)
	var ping map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ping))
	resp.Body.Close()
	assert.Equal(t, "Healthy", ping["status"])
	assert.Contains(t, ping, "time_of_last_update")

	assert.Equal(t, "one", s.invoke(t, session, `{"prompt": "first"}`)["response"])
	assert.Equal(t, "two", s.invoke(t, session, `{"prompt": "second"}`)["response"])
	require.NoError(t, s.stop())

	again := startServe(t, args...)
	assert.Equal(t, "three", again.invoke(t, session, `{"prompt": "third"}`)["response"])
	require.NoError(t, again.stop())

	reqs := bed.Requests()
	require.Len(t, reqs, 3)
	assert.Len(t, reqs[2].Messages, 5, "the restarted server continued the session from -sessions")
	assert.Equal(t, "Be brief.", systemText(reqs[2]), "the flags configure the served conversations")
}

// TestServeLimits: an invocation that reaches -max-turns answers 200 with
// the status "limit", and stops the task: the next invocation's prompt is
// the next request's last message, nothing resumed first. A budget reached
// is a 200 "limit" too, each time, never a 5xx.
func TestServeLimits(t *testing.T) {
	setTestEnv(t)
	now := func(id string) *bedrocktest.Reply {
		return bedrocktest.ToolUse("Checking.", bedrocktest.Call{ID: id, Name: "get_current_datetime"})
	}
	const session = "0123456789abcdef0123456789abcdef-cli"
	bed := newServer(t, bedrocktest.Script(now("t1"), now("t2"), bedrocktest.Text("Hello.")))
	s := startServe(t, "-endpoint", bed.URL, "-sessions", t.TempDir(), "-max-turns", "2")

	limited := s.invoke(t, session, `{"prompt": "What time is it?"}`)
	assert.Equal(t, "limit", limited["status"])
	assert.Equal(t, "turns", limited["limit"])
	assert.Equal(t, "Checking.", limited["response"])
	assert.Contains(t, limited, "usage")

	next := s.invoke(t, session, `{"prompt": "Hi."}`)
	assert.Equal(t, "success", next["status"])
	assert.Equal(t, "Hello.", next["response"])
	assert.NotContains(t, next, "resumed", "the stopped task is not resumed")
	reqs := bed.Requests()
	last := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Content
	assert.Equal(t, "Hi.", last[len(last)-1].(*types.ContentBlockMemberText).Value, "the prompt is the request's last message")

	made := len(bed.Requests())
	spent := startServe(t, "-endpoint", bed.URL, "-sessions", t.TempDir(), "-max-tokens-total", "1")
	for range 2 {
		a := spent.invoke(t, session, `{"prompt": "What time is it?"}`)
		assert.Equal(t, "limit", a["status"])
		assert.Equal(t, "total tokens", a["limit"])
	}
	assert.Len(t, bed.Requests(), made, "no model call passed the budget")
}

// TestServeVerbose: with -v each invocation's trace goes to standard
// error, every line after its session, and so do the retries of model
// calls.
func TestServeVerbose(t *testing.T) {
	setTestEnv(t)
	bed := newServer(t, bedrocktest.Throttle(1, multiply()))
	s := startServe(t, "-endpoint", bed.URL, "-sessions", t.TempDir(), "-v")
	const session = "0123456789abcdef0123456789abcdef-cli"
	assert.Equal(t, "6 × 7 = 42.", s.invoke(t, session, `{"prompt": "What is 6 times 7?"}`)["response"])

	out := s.stderr(t)
	assert.Regexp(t, `(?m)^· model call failed \(ThrottlingException: [^)]*\); retry 1 in [0-9.]+m?s$`, out)
	for _, want := range []string{
		"[" + session + "] · turn 1: tool_use; tokens ",
		"[" + session + `] → calculator tooluse_calc1 {"a":6,"b":7,"operation":"multiply"}`,
		"[" + session + "] ← calculator tooluse_calc1 success in ",
		"[" + session + "] · turn 2: end_turn; tokens ",
	} {
		assert.Contains(t, out, want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		assert.Regexp(t, `^(\[`+session+`\] |· model call failed|time=.* session=`+session+` )`, line, "every line says whose it is")
	}
}

// TestServeDynamoSessions: with -sessions dynamodb://TABLE each session is the
// table's item of its runtime session id. A second invocation continues it,
// and a restarted server does too. A session past 400 KB goes to
// -session-bucket. The library's store reads what was saved. serve -h says
// how.
func TestServeDynamoSessions(t *testing.T) {
	setTestEnv(t)
	db := dynamotest.DynamoDB(t)
	table := dynamotest.Table(t, db, "id", "")
	s3URL := dynamotest.S3(t)
	bucketClient := dynamotest.S3Client(s3URL, nil)
	bucket := dynamotest.Bucket(t, bucketClient)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamotest.DynamoEndpoint(t))
	t.Setenv("AWS_ENDPOINT_URL_S3", s3URL)
	big := incompressible(600 << 10) // past 400 KB gzipped too
	bed := newServer(t, bedrocktest.Script(bedrocktest.Text("one"), bedrocktest.Text(big), bedrocktest.Text("three")))
	args := []string{"-endpoint", bed.URL, "-sessions", "dynamodb://" + table, "-session-bucket", bucket + "/served"}
	const session = "0123456789abcdef0123456789abcdef-ddb"

	s := startServe(t, args...)
	assert.Equal(t, "one", s.invoke(t, session, `{"prompt": "first"}`)["response"])
	assert.Equal(t, big, s.invoke(t, session, `{"prompt": "second"}`)["response"])
	require.NoError(t, s.stop())

	again := startServe(t, args...)
	assert.Equal(t, "three", again.invoke(t, session, `{"prompt": "third"}`)["response"])
	require.NoError(t, again.stop())

	reqs := bed.Requests()
	require.Len(t, reqs, 3)
	assert.Len(t, reqs[1].Messages, 3, "the second invocation continued the session")
	assert.Len(t, reqs[2].Messages, 5, "the restarted server continued the session from the table")

	store := dynamostore.New(db, table, func(o *dynamostore.Options) { o.S3 = bucketClient })
	st, err := store.Load(context.Background(), session)
	require.NoError(t, err)
	assert.Len(t, st.Messages, 6)
	assert.Equal(t, int64(6), st.Revision, "a prompt and an answer saved by each invocation")
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: map[string]dbtypes.AttributeValue{"id": &dbtypes.AttributeValueMemberS{Value: session}}})
	require.NoError(t, err)
	segments := out.Item["segments"].(*dbtypes.AttributeValueMemberL).Value // the history's, one a save
	require.Len(t, segments, 6)
	reply := segments[3].(*dbtypes.AttributeValueMemberM).Value // the second answer
	assert.Equal(t, &dbtypes.AttributeValueMemberS{Value: bucket}, reply["bucket"], "past 400 KB the step is in -session-bucket")
	key, ok := reply["key"].(*dbtypes.AttributeValueMemberS)
	require.True(t, ok, "the item names the S3 object")
	assert.True(t, strings.HasPrefix(key.Value, "served/"+session+"/"), "under its prefix: %s", key.Value)

	help := runInProcess(t, nil, "serve", "-h")
	assert.Contains(t, help.stdout, "-sessions dynamodb://TABLE", "serve -h says so")
}

func systemText(req *bedrocktest.Request) string {
	if len(req.System) == 0 {
		return ""
	}
	text, _ := req.System[0].(*types.SystemContentBlockMemberText)
	if text == nil {
		return ""
	}
	return text.Value
}

func TestServeUsage(t *testing.T) {
	schema := filepath.Join(t.TempDir(), "schema.json")
	require.NoError(t, os.WriteFile(schema, []byte(`{"type": "object"}`), 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "hello"}, "serve takes no prompt"},
		{[]string{"serve", "-session", "x.json"}, "-session is not for serve"},
		{[]string{"serve", "-json"}, "-json is not for serve"},
		{[]string{"serve", "-record", "r.json"}, "-record is not for serve: it records the model calls of one run at the terminal"},
		{[]string{"serve", "-schema", schema}, "-schema is not for serve: an invocation's answer is the conversation's text"},
		{[]string{"serve", "-bogus"}, "flag provided but not defined: -bogus (run converse serve -h for usage)"},
		{[]string{"serve", "-stop-after-tool", "nosuch"}, "-stop-after-tool nosuch: no such tool"},
		{[]string{"serve", "-sessions", "dynamodb://"}, "-sessions dynamodb://: want dynamodb://TABLE"},
		{[]string{"serve", "-sessions", "dynamodb://sessions/s1"}, "the runtime's session id names the item"},
		{[]string{"serve", "-session-bucket", "b"}, "-session-bucket needs -sessions dynamodb://TABLE"},
		{[]string{"serve", "-sessions", "dynamodb://sessions", "-session-bucket", "/b"}, "-session-bucket /b: want BUCKET[/PREFIX]"},
	} {
		out := runInProcess(t, nil, tc.args...)
		assert.Equal(t, 2, out.code, out.stderr)
		assert.Contains(t, out.stderr, tc.want)
		assert.NotContains(t, out.stderr, "sessions are kept in -sessions, answers are JSON already", "a reason of its own")
	}
}

// TestServeListTools: converse serve -list-tools lists the tools each
// invocation would be offered and exits, serving nothing.
func TestServeListTools(t *testing.T) {
	out := runInProcess(t, nil, "serve", "-addr", "127.0.0.1:0", "-list-tools")
	require.Equal(t, 0, out.code, out.stderr)
	mustContain(t, "stdout", out.stdout, "calculator", "get_current_datetime", "built-in")
	assert.NotContains(t, out.stderr, "serving")
}

// TestServeListensOnLoopback: serve, which authenticates no caller, listens
// on loopback unless told otherwise, warns when it is told, and says so in
// serve -h, with the address AgentCore Runtime's container wants.
func TestServeListensOnLoopback(t *testing.T) {
	help := runInProcess(t, nil, "serve", "-h")
	text := strings.Join(strings.Fields(help.stdout), " ")
	mustContain(t, "serve -h", text, `(default "127.0.0.1:8080")`, "no authentication of its own", "-addr 0.0.0.0:8080")

	setTestEnv(t)
	local := startServe(t, "-sessions", t.TempDir())
	assert.NotContains(t, local.stderr(t), "warning")

	open := startServe(t, "-sessions", t.TempDir(), "-addr", "0.0.0.0:0")
	assert.Contains(t, open.stderr(t), "is reachable beyond this machine, and serve authenticates no caller")
}

// TestServeLogsEachInvocation: a failed invocation is one record on
// standard error, with or without -v, as JSON with -log-json.
func TestServeLogsEachInvocation(t *testing.T) {
	setTestEnv(t)
	bed := newServer(t, bedrocktest.Script()) // every call a ValidationException
	const session = "0123456789abcdef0123456789abcdef-cli"
	for _, args := range [][]string{{}, {"-log-json"}} {
		s := startServe(t, append([]string{"-endpoint", bed.URL, "-sessions", t.TempDir()}, args...)...)
		req, err := http.NewRequest(http.MethodPost, s.url+"/invocations", strings.NewReader(`{"prompt": "Hi"}`))
		require.NoError(t, err)
		req.Header.Set(agentcore.SessionHeader, session)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadGateway, resp.StatusCode)

		out := s.stderr(t)
		if len(args) == 0 {
			mustContain(t, "stderr", out, "level=ERROR", "session="+session, "code=502", "errorClass=caller", "ValidationException")
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out)), &rec), out)
		assert.Equal(t, session, rec["session"])
		assert.EqualValues(t, 502, rec["code"])
		assert.Contains(t, rec["error"], "ValidationException")
	}
}

// TestServeMaxBody: -max-body bounds an invocation's body.
func TestServeMaxBody(t *testing.T) {
	setTestEnv(t)
	s := startServe(t, "-sessions", t.TempDir(), "-max-body", "100")
	req, err := http.NewRequest(http.MethodPost, s.url+"/invocations", strings.NewReader(`{"prompt": "`+strings.Repeat("a", 200)+`"}`))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	out := runInProcess(t, nil, "serve", "-max-concurrent", "0")
	assert.Equal(t, 2, out.code)
	assert.Contains(t, out.stderr, "-max-body and -max-concurrent want a number above 0")
}

// TestServeRefusesHugeHeaders: serve's server takes headers of up to 128
// KiB, not net/http's 1 MB.
func TestServeRefusesHugeHeaders(t *testing.T) {
	setTestEnv(t)
	s := startServe(t, "-sessions", t.TempDir())
	req, err := http.NewRequest(http.MethodGet, s.url+"/ping", nil)
	require.NoError(t, err)
	req.Header.Set("X-Amzn-Bedrock-AgentCore-Runtime-Custom-Big", strings.Repeat("a", 200<<10))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	srv := newHTTPServer(http.NotFoundHandler())
	assert.Positive(t, srv.IdleTimeout)
	assert.Positive(t, srv.ReadHeaderTimeout)
}

// TestServeHelpListsItsFlags: serve -h lists the flags serve takes, and
// none of those it refuses (issue 45 item 19); converse -h lists those.
func TestServeHelpListsItsFlags(t *testing.T) {
	serveHelp := runInProcess(t, nil, "serve", "-h").stdout
	help := runInProcess(t, nil, "-h").stdout
	for _, r := range serveCommand.refused {
		assert.NotContains(t, serveHelp, "\n  -"+r.flag+" ", "serve -h")
		assert.Contains(t, help, "\n  -"+r.flag+"", "converse -h")
	}
	for _, f := range []string{"addr", "sessions", "max-body", "log-json", "model", "tools", "yes"} {
		assert.Contains(t, serveHelp, "\n  -"+f, "serve -h")
	}
	assert.NotContains(t, help, "\n  -addr", "converse -h")
}
