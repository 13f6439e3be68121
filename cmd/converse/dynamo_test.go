package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/dynamostore"
	"github.com/tooluse/bedrock/converse/dynamostore/dynamotest"
)

// dynamoEnv is the environment of converse processes whose DynamoDB is
// dynalite (AWS_ENDPOINT_URL_DYNAMODB) and whose S3 is s3URL, if not empty
// (AWS_ENDPOINT_URL_S3); it returns the -session of a new table.
func dynamoEnv(t *testing.T, s3URL string) ([]string, string, *dynamostore.Store) {
	t.Helper()
	db := dynamotest.DynamoDB(t)
	table := dynamotest.Table(t, db, "id", "")
	env := testEnv(t, "AWS_ENDPOINT_URL_DYNAMODB="+dynamotest.DynamoEndpoint(t))
	optFns := []func(*dynamostore.Options){}
	if s3URL != "" {
		env = append(env, "AWS_ENDPOINT_URL_S3="+s3URL)
		client := dynamotest.S3Client(s3URL, nil)
		optFns = append(optFns, func(o *dynamostore.Options) { o.S3 = client })
	}
	return env, "dynamodb://" + table + "/chat-1", dynamostore.New(db, table, optFns...)
}

// incompressible is n bytes of random base64: a reply gzip cannot shrink
// below DynamoDB's item limit.
func incompressible(n int) string {
	b := make([]byte, n*3/4)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// TestDynamoSession: -session dynamodb://TABLE/ID keeps the conversation in
// the table's item: a second process continues it from there, and a store
// of the library reads it.
func TestDynamoSession(t *testing.T) {
	t.Parallel()
	env, session, store := dynamoEnv(t, "")
	first := newServer(t, bedrocktest.Script(bedrocktest.Text("Hello.")))
	out := runBinary(t, env, nil, "-endpoint", first.URL, "-session", session, "hi")
	require.Equal(t, 0, out.code, out.stderr)

	second := newServer(t, bedrocktest.Script(bedrocktest.Text("Again.")))
	out = runBinary(t, env, nil, "-endpoint", second.URL, "-session", session, "once more")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Again.\n", out.stdout)
	require.Len(t, second.Requests(), 1)
	assert.Len(t, second.Requests()[0].Messages, 3, "the first process's exchange, then the prompt")

	st, err := store.Load(context.Background(), "chat-1")
	require.NoError(t, err)
	assert.Len(t, st.Messages, 4)
	assert.Equal(t, int64(4), st.Revision, "a prompt and an answer saved by each process")

	out = runBinary(t, env, nil, "-endpoint", second.URL, "-session", session)
	assert.Equal(t, 2, out.code)
	assert.Contains(t, out.stderr, "is finished: give a prompt to continue it")
	out = runBinary(t, env, nil, "-endpoint", second.URL, "-session", strings.TrimSuffix(session, "chat-1")+"other")
	assert.Equal(t, 2, out.code)
	assert.Contains(t, out.stderr, "does not exist yet")
}

// TestDynamoSessionConflict: while a process's tool runs, another run of
// the session fails at once, exit 7, naming the first's process as the
// holder, and asks no model; the first then finishes and saves.
func TestDynamoSessionConflict(t *testing.T) {
	t.Parallel()
	env, session, store := dynamoEnv(t, "")
	manifest, pipe := hangManifest(t, filepath.Join(t.TempDir(), "marks"))
	first := newServer(t, bedrocktest.Script(bedrocktest.ToolUse("", bedrocktest.Call{ID: "h1", Name: "hang"}), bedrocktest.Text("Mine.")))
	cmd, stderr, tool := startHang(t, env, pipe, "-endpoint", first.URL, "-tools", manifest, "-no-builtins", "-session", session, "go")

	second := newServer(t, bedrocktest.Script(bedrocktest.Text("Taken over.")))
	out := runBinary(t, env, nil, "-endpoint", second.URL, "-tools", manifest, "-no-builtins", "-session", session, "another prompt")
	assert.Equal(t, exitConflict, out.code, out.stderr)
	assert.Regexp(t, fmt.Sprintf(`session in use: "chat-1" is held by [^/]+/%d/[0-9a-f]+ until 20`, cmd.Process.Pid), out.stderr)
	assert.Empty(t, second.Requests())

	require.NoError(t, syscall.Kill(tool, syscall.SIGKILL)) // the first's call ends
	err := cmd.Wait()
	checkRace(t, cmd.ProcessState.ExitCode(), stderr.String())
	require.NoError(t, err, stderr.String())
	st, err := store.Load(context.Background(), "chat-1")
	require.NoError(t, err)
	last := st.Messages[len(st.Messages)-1]
	assert.Equal(t, "Mine.", last.Content[0].(*types.ContentBlockMemberText).Value)
}

// TestDynamoSessionLarge: a session past 400 KB goes to S3 with
// -session-bucket; without it, its save fails with an error naming the
// flag.
func TestDynamoSessionLarge(t *testing.T) {
	t.Parallel()
	s3URL := dynamotest.S3(t)
	bucket := dynamotest.Bucket(t, dynamotest.S3Client(s3URL, nil))
	env, session, store := dynamoEnv(t, s3URL)
	big := incompressible(600 << 10)
	srv := newServer(t, bedrocktest.Script(bedrocktest.Text(big), bedrocktest.Text(big)))
	out := runBinary(t, env, nil, "-endpoint", srv.URL, "-session", session, "-session-bucket", bucket+"/sessions", "hi")
	require.Equal(t, 0, out.code, out.stderr)
	st, err := store.Load(context.Background(), "chat-1")
	require.NoError(t, err)
	assert.Equal(t, big, st.Messages[1].Content[0].(*types.ContentBlockMemberText).Value)

	env, session, _ = dynamoEnv(t, s3URL)
	out = runBinary(t, env, nil, "-endpoint", srv.URL, "-session", session, "hi")
	assert.Equal(t, 1, out.code)
	assert.Contains(t, out.stderr, "-session "+session+": the session is too large to save in DynamoDB (")
	assert.Contains(t, out.stderr, "give -session-bucket BUCKET[/PREFIX] to keep it in S3")
}

// TestDynamoSessionKilledBetweenWrites: a converse process is killed
// after its step (a 600 KB reply) reached S3 and before the item pointing
// at it was written (the S3 endpoint kills it as the object is stored). It
// leaves the session at its previous step, its prompt, which loads. The
// next process fails while the killed one's lease lasts, and continues the
// session once it ended.
func TestDynamoSessionKilledBetweenWrites(t *testing.T) {
	t.Parallel()
	fake, err := url.Parse(dynamotest.S3(t))
	require.NoError(t, err)
	var victim atomic.Int64 // the pid to kill at the next PutObject, if not 0
	proxy := httputil.NewSingleHostReverseProxy(fake)
	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		if pid := victim.Load(); pid != 0 && r.Method == http.MethodPut && strings.Count(strings.Trim(r.URL.Path, "/"), "/") > 0 {
			syscall.Kill(int(pid), syscall.SIGKILL) // the object is stored; the answer never arrives
			<-r.Context().Done()
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(s3.Close)
	bucket := dynamotest.Bucket(t, dynamotest.S3Client(s3.URL, nil))
	env, session, store := dynamoEnv(t, s3.URL)
	big := incompressible(600 << 10)
	srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Short."), bedrocktest.Text(big), bedrocktest.Text("Continued.")))
	args := []string{"-endpoint", srv.URL, "-session", session, "-session-bucket", bucket}
	out := runBinary(t, env, nil, append(args, "hi")...)
	require.Equal(t, 0, out.code, out.stderr)
	before, err := store.Load(context.Background(), "chat-1")
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := binaryCommand(ctx, env, append(args, "second")...)
	require.NoError(t, cmd.Start())
	victim.Store(int64(cmd.Process.Pid))
	err = cmd.Wait()
	require.Error(t, err)
	status := cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, status.Signaled(), "killed at the S3 write: %v", err)
	victim.Store(0)

	after, err := store.Load(context.Background(), "chat-1")
	require.NoError(t, err, "the session loads")
	assert.Equal(t, before.Revision+1, after.Revision)
	require.Len(t, after.Messages, 3, "at its previous step: the second prompt")
	assert.Equal(t, before.Messages, after.Messages[:2])

	out = runBinary(t, env, nil, append(args, "third")...)
	assert.Equal(t, exitConflict, out.code, out.stderr)
	assert.Regexp(t, fmt.Sprintf(`session in use: "chat-1" is held by [^/]+/%d/`, cmd.Process.Pid), out.stderr)
	table := strings.TrimSuffix(strings.TrimPrefix(session, "dynamodb://"), "/chat-1")
	_, err = dynamotest.DynamoDB(t).UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(table), // the lease ends, as 30 s unrenewed would
		Key:              map[string]dbtypes.AttributeValue{"id": &dbtypes.AttributeValueMemberS{Value: "chat-1"}},
		UpdateExpression: aws.String("SET heldUntil = :past"),
		ExpressionAttributeValues: map[string]dbtypes.AttributeValue{
			":past": &dbtypes.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Add(-time.Second).UnixMilli(), 10)}}})
	require.NoError(t, err)
	out = runBinary(t, env, nil, args...) // resumes the cut-off prompt
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Continued.\n", out.stdout)
	reqs := srv.Requests()
	assert.Len(t, reqs[len(reqs)-1].Messages, 3, "the first exchange, then the second prompt")
}

// TestDynamoSessionNoTable: -session dynamodb://TABLE/ID of a table that
// does not exist fails before any model call, saying so and how to create
// it, with or without a prompt.
func TestDynamoSessionNoTable(t *testing.T) {
	t.Parallel()
	env := testEnv(t, "AWS_ENDPOINT_URL_DYNAMODB="+dynamotest.DynamoEndpoint(t))
	table := dynamotest.Name("missing")
	srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hello.")))
	for _, args := range [][]string{{"hi"}, {}} {
		out := runBinary(t, env, nil, append([]string{"-endpoint", srv.URL, "-session", "dynamodb://" + table + "/chat-1"}, args...)...)
		assert.Equal(t, 2, out.code, out.stderr)
		assert.Contains(t, out.stderr, "converse: -session dynamodb://"+table+"/chat-1: the DynamoDB table "+table+" does not exist (in this account and region): create it, as converse help session shows, or name another table\n")
	}
	assert.Empty(t, srv.Requests())
}

// TestDynamoTableGoneDuringRun: a save that finds the table gone is said to
// be that, not a Bedrock error.
func TestDynamoTableGoneDuringRun(t *testing.T) {
	t.Parallel()
	gone := fmt.Errorf("converse: save session: %w", &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "PutItem",
		Err: &dbtypes.ResourceNotFoundException{Message: aws.String("Requested resource not found")}})
	err := explain(gone, where{model: defaultModel, region: "us-east-1", session: "dynamodb://sessions/chat-1"})
	assert.EqualError(t, err, "-session dynamodb://sessions/chat-1: the DynamoDB table sessions does not exist (in this account and region): create it, as converse help session shows, or name another table")
	assert.ErrorIs(t, err, gone)
}
