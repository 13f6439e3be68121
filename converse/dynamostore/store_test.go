package dynamostore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/dynamostore"
	"github.com/tooluse/bedrock/converse/dynamostore/dynamotest"
	"github.com/tooluse/bedrock/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const claude = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

// textState is a state of len(words) messages, alternating from the user.
func textState(words ...string) *converse.State {
	st := &converse.State{ModelID: claude}
	for i, w := range words {
		role := types.ConversationRoleUser
		if i%2 == 1 {
			role = types.ConversationRoleAssistant
		}
		st.Messages = append(st.Messages, types.Message{Role: role, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: w}}})
	}
	return st
}

// fixture is where a test's Store keeps its sessions.
type fixture struct {
	db    *dynamodb.Client
	table string
	opts  []func(*dynamostore.Options) // those of the Store, S3 included
}

// newStore is a Store of a new table of dynalite, and, if s3Transport is
// not nil, of a bucket of gofakes3 sent to through it.
func newStore(t testing.TB, s3Transport http.RoundTripper, optFns ...func(*dynamostore.Options)) (*dynamostore.Store, fixture) {
	t.Helper()
	db := dynamotest.DynamoDB(t)
	o := dynamostore.Options{}
	for _, fn := range optFns {
		fn(&o)
	}
	f := fixture{db: db, table: dynamotest.Table(t, db, cmp(o.PartitionKey, "id"), o.SortKey), opts: optFns}
	if s3Transport != nil {
		client := dynamotest.S3Client(dynamotest.S3(t), s3Transport)
		bucket := dynamotest.Bucket(t, client)
		f.opts = append(f.opts, func(o *dynamostore.Options) { o.S3, o.Bucket, o.Prefix = client, bucket, "sessions/" })
	}
	return dynamostore.New(db, f.table, f.opts...), f
}

// s3 is the S3 client of the fixture's Store.
func (f fixture) s3() *s3.Client {
	var o dynamostore.Options
	for _, fn := range f.opts {
		fn(&o)
	}
	return o.S3
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func getItem(t *testing.T, db *dynamodb.Client, table string, key map[string]dbtypes.AttributeValue) map[string]dbtypes.AttributeValue {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	return out.Item
}

func attrNames(item map[string]dbtypes.AttributeValue) []string {
	var names []string
	for n := range item {
		names = append(names, n)
	}
	return names
}

// TestRoundTrip: a state saved loads back the same at the next revision,
// in the item layout the package doc gives: the item and one segment
// holding the history. Up to 400 KB the segment holds the messages,
// gzipped or not. Past it (2 MB of history), they are in S3 with the
// segment pointing at them.
func TestRoundTrip(t *testing.T) {
	big := strings.Repeat("a long tool result ", 2<<20/19)
	for _, tt := range []struct {
		name     string
		words    []string
		offload  bool
		opts     func(*dynamostore.Options)
		inS3     bool
		encoding string
	}{
		{name: "small", words: []string{"hello", "hi"}, opts: func(*dynamostore.Options) {}, encoding: "json"},
		{name: "small gzip", words: []string{"hello", "hi"}, opts: func(o *dynamostore.Options) { o.Gzip = true }, encoding: "gzip"},
		{name: "key names and prefix", words: []string{"hello"}, opts: func(o *dynamostore.Options) {
			o.PartitionKey, o.SortKey, o.KeyPrefix = "pk", "sk", "converse#"
		}, encoding: "json"},
		{name: "2 MB in S3", words: []string{"hello", big}, offload: true, opts: func(*dynamostore.Options) {}, inS3: true, encoding: "json"},
		{name: "2 MB gzip stays in the item", words: []string{"hello", big}, offload: true, opts: func(o *dynamostore.Options) { o.Gzip = true }, encoding: "gzip"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var transport http.RoundTripper
			if tt.offload {
				transport = http.DefaultTransport
			}
			store, f := newStore(t, transport, tt.opts)
			db, table := f.db, f.table
			ctx := context.Background()
			st := textState(tt.words...)
			require.NoError(t, store.Save(ctx, "s1", st))
			assert.Equal(t, int64(1), st.Revision)
			got, err := store.Load(ctx, "s1")
			require.NoError(t, err)
			assert.Equal(t, int64(1), got.Revision)
			assert.Equal(t, st.Messages, got.Messages)

			var o dynamostore.Options
			tt.opts(&o)
			key := map[string]dbtypes.AttributeValue{cmp(o.PartitionKey, "id"): &dbtypes.AttributeValueMemberS{Value: o.KeyPrefix + "s1"}}
			if o.SortKey != "" {
				key[o.SortKey] = &dbtypes.AttributeValueMemberS{Value: "session"}
			}
			item := getItem(t, db, table, key)
			require.NotNil(t, item, "the item is at the key the doc says")
			assert.Equal(t, &dbtypes.AttributeValueMemberN{Value: "1"}, item["revision"])
			assert.Equal(t, &dbtypes.AttributeValueMemberS{Value: tt.encoding}, item["encoding"])
			assert.ElementsMatch(t, append(attrNames(key), "revision", "encoding", "writer", "state", "segments"), attrNames(item))
			segs := segmentIDs(t, item)
			require.Len(t, segs, 1, "one segment holds the history")
			seg := getItem(t, db, table, segmentKey(o, "s1", segs[0]))
			require.NotNil(t, seg, "the segment is at the key the doc says")
			assert.Equal(t, &dbtypes.AttributeValueMemberS{Value: tt.encoding}, seg["encoding"])
			if !tt.inS3 {
				assert.ElementsMatch(t, append(attrNames(key), "encoding", "messages"), attrNames(seg))
				return
			}
			assert.ElementsMatch(t, append(attrNames(key), "encoding", "bucket", "key"), attrNames(seg))
			offloadedSegmentGoes(t, store, f, got, segmentKey(o, "s1", segs[0]), seg)
		})
	}
}

// offloadedSegmentGoes: the segment at key (item seg, in S3) of the session
// "s1" saved as got is kept by a save that extends the history. It is
// deleted with its object by one that writes the history whole.
func offloadedSegmentGoes(t *testing.T, store *dynamostore.Store, f fixture, got *converse.State, key, seg map[string]dbtypes.AttributeValue) {
	t.Helper()
	ctx := context.Background()
	first := seg["key"].(*dbtypes.AttributeValueMemberS).Value
	assert.True(t, strings.HasPrefix(first, "sessions/s1/00000000000000000001-"), first)
	got.Messages = append(got.Messages, textState("more").Messages...)
	require.NoError(t, store.Save(ctx, "s1", got))
	again, err := store.Load(ctx, "s1")
	require.NoError(t, err)
	assert.Equal(t, got.Messages, again.Messages)
	_, err = f.s3().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucketOf(seg)), Key: aws.String(first)})
	assert.NoError(t, err, "a save that extends the history keeps the first segment")

	again.Messages = textState("hello", "other").Messages
	require.NoError(t, store.Save(ctx, "s1", again))
	_, err = f.s3().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucketOf(seg)), Key: aws.String(first)})
	assert.Error(t, err, "the first object is deleted once a save no longer points at it")
	assert.Nil(t, getItem(t, f.db, f.table, key), "and so is its segment")
}

// segmentIDs are the ids of the segments of a session's item.
func segmentIDs(t *testing.T, item map[string]dbtypes.AttributeValue) []string {
	t.Helper()
	var ids []string
	for _, v := range item["segments"].(*dbtypes.AttributeValueMemberL).Value {
		ids = append(ids, v.(*dbtypes.AttributeValueMemberM).Value["id"].(*dbtypes.AttributeValueMemberS).Value)
	}
	return ids
}

// segmentKey is the key of the segment seg of the session id, as the
// package doc lays it out.
func segmentKey(o dynamostore.Options, id, seg string) map[string]dbtypes.AttributeValue {
	pk := cmp(o.PartitionKey, "id")
	if o.SortKey == "" {
		return map[string]dbtypes.AttributeValue{pk: &dbtypes.AttributeValueMemberS{Value: o.KeyPrefix + id + "#segment#" + seg}}
	}
	return map[string]dbtypes.AttributeValue{
		pk:        &dbtypes.AttributeValueMemberS{Value: o.KeyPrefix + id},
		o.SortKey: &dbtypes.AttributeValueMemberS{Value: "segment#" + seg},
	}
}

func bucketOf(item map[string]dbtypes.AttributeValue) string {
	return item["bucket"].(*dbtypes.AttributeValueMemberS).Value
}

// TestVersionedWrites: a save on top of a revision that is not the item's
// fails with ErrSessionChanged and changes nothing: a new state over an
// existing session, a stale one over a newer.
func TestVersionedWrites(t *testing.T) {
	store, _ := newStore(t, nil)
	ctx := context.Background()
	require.NoError(t, store.Save(ctx, "s", textState("first")))
	err := store.Save(ctx, "s", textState("new"))
	require.ErrorIs(t, err, converse.ErrSessionChanged)
	assert.EqualError(t, err, `dynamostore: session changed: "s" was saved by another conversation since this one last saved or was restored from it (revision 0); Load and Restore it again`)

	a, err := store.Load(ctx, "s")
	require.NoError(t, err)
	b, err := store.Load(ctx, "s")
	require.NoError(t, err)
	a.Messages = textState("first", "a").Messages
	require.NoError(t, store.Save(ctx, "s", a))
	b.Messages = textState("first", "b").Messages
	require.ErrorIs(t, store.Save(ctx, "s", b), converse.ErrSessionChanged)
	assert.Equal(t, int64(1), b.Revision, "a failed save leaves the state's revision")
	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, a.Messages, got.Messages)
	assert.Equal(t, int64(2), got.Revision)

	_, err = store.Load(ctx, "absent")
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// TestTooLarge: past 400 KB without a bucket, a save fails with
// ErrItemTooLarge, saying the size, and the session keeps its state.
func TestTooLarge(t *testing.T) {
	store, _ := newStore(t, nil)
	ctx := context.Background()
	st := textState("hello")
	require.NoError(t, store.Save(ctx, "s", st))
	st.Messages = textState("hello", strings.Repeat("x", 500<<10)).Messages
	err := store.Save(ctx, "s", st)
	require.ErrorIs(t, err, dynamostore.ErrItemTooLarge)
	assert.Contains(t, err.Error(), `dynamostore: save session "s": item too large: 501 KB, past DynamoDB's 400 KB, and no S3 bucket is set to offload it to`)
	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, textState("hello").Messages, got.Messages)
}

// TestTTL: each save sets the TTL attribute to the save's time and TTL; an
// item past it loads as absent, and a new conversation may save over it.
func TestTTL(t *testing.T) {
	store, f := newStore(t, nil, func(o *dynamostore.Options) { o.TTL, o.TTLAttribute = time.Hour, "ttl" })
	db, table := f.db, f.table
	ctx := context.Background()
	before := time.Now().Add(time.Hour).Unix()
	require.NoError(t, store.Save(ctx, "s", textState("hello")))
	after := time.Now().Add(time.Hour).Unix()
	key := map[string]dbtypes.AttributeValue{"id": &dbtypes.AttributeValueMemberS{Value: "s"}}
	expires, err := strconv.ParseInt(getItem(t, db, table, key)["ttl"].(*dbtypes.AttributeValueMemberN).Value, 10, 64)
	require.NoError(t, err)
	assert.True(t, before <= expires && expires <= after, "%d in [%d, %d]", expires, before, after)

	_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key,
		UpdateExpression:          aws.String("SET #t = :past"),
		ExpressionAttributeNames:  map[string]string{"#t": "ttl"},
		ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":past": &dbtypes.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10)}}})
	require.NoError(t, err)
	_, err = store.Load(ctx, "s")
	require.ErrorIs(t, err, fs.ErrNotExist, "an expired item is absent")
	require.NoError(t, store.Save(ctx, "s", textState("again")), "a new conversation saves over an expired one")
	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, textState("again").Messages, got.Messages)
}

// TestNoLostUpdateAfterExpiry: a writer loaded a session before it
// expired. A new conversation then saved the session anew, its revision
// going on from the expired one's. The writer fails with
// ErrSessionChanged. It fails too if the expired item was deleted (as
// DynamoDB's TTL does) and the new session starts again at revision 1.
func TestNoLostUpdateAfterExpiry(t *testing.T) {
	for _, deleted := range []bool{false, true} {
		t.Run(fmt.Sprintf("deleted=%v", deleted), func(t *testing.T) {
			store, f := newStore(t, nil, func(o *dynamostore.Options) { o.TTL = time.Hour })
			ctx := context.Background()
			require.NoError(t, store.Save(ctx, "s", textState("old")))
			a, err := store.Load(ctx, "s")
			require.NoError(t, err)
			require.Equal(t, int64(1), a.Revision)

			key := map[string]dbtypes.AttributeValue{"id": &dbtypes.AttributeValueMemberS{Value: "s"}}
			if deleted {
				_, err = f.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(f.table), Key: key})
			} else {
				_, err = f.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(f.table), Key: key,
					UpdateExpression:          aws.String("SET expires = :past"),
					ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":past": &dbtypes.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10)}}})
			}
			require.NoError(t, err)
			_, err = store.Load(ctx, "s")
			require.ErrorIs(t, err, fs.ErrNotExist)

			b := textState("new")
			require.NoError(t, store.Save(ctx, "s", b))
			if !deleted {
				assert.Equal(t, int64(2), b.Revision, "the revision goes on from the expired session's")
			}
			a.Messages = textState("old", "stale").Messages
			require.ErrorIs(t, store.Save(ctx, "s", a), converse.ErrSessionChanged)
			got, err := store.Load(ctx, "s")
			require.NoError(t, err)
			assert.Equal(t, b.Messages, got.Messages, "the new session is kept")
			assert.Equal(t, b.Revision, got.Revision)
		})
	}
}

// isHeadPut reports whether req is a DynamoDB PutItem of a session's item,
// not of a segment: only the session's item has a revision.
func isHeadPut(req *http.Request) bool {
	if req.Header.Get("X-Amz-Target") != "DynamoDB_20120810.PutItem" {
		return false
	}
	b, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(b))
	return bytes.Contains(b, []byte(`"revision":`))
}

// failPutItem fails each DynamoDB PutItem of a session's item, as a
// process that died after writing the S3 object and the segment would
// never send it.
type failPutItem struct{}

func (failPutItem) RoundTrip(req *http.Request) (*http.Response, error) {
	if isHeadPut(req) {
		return nil, errors.New("the process died")
	}
	return http.DefaultTransport.RoundTrip(req)
}

// offloadedSession returns three things. The first is a Store whose
// session "s" was saved once, its state past DynamoDB's item size and so
// in S3. The second is another Store of the same table. Its DynamoDB
// client sends through transport with attempts attempts (0: the SDK's
// default). The third is the next state of the session, to save with it.
func offloadedSession(t *testing.T, transport http.RoundTripper, attempts int) (store, other *dynamostore.Store, saved, next *converse.State) {
	t.Helper()
	store, f := newStore(t, http.DefaultTransport)
	big := strings.Repeat("y", 600<<10)
	saved = textState("hello", big)
	require.NoError(t, store.Save(context.Background(), "s", saved))
	o := f.db.Options()
	o.HTTPClient = &http.Client{Transport: transport}
	if attempts > 0 {
		o.RetryMaxAttempts = attempts
	}
	next = textState("hello", big, "more", big)
	next.Revision = saved.Revision
	return store, dynamostore.New(dynamodb.New(o), f.table, f.opts...), saved, next
}

// TestCrashBetweenWrites: a save whose object is written to S3 but whose
// item is not leaves the session at its previous state, which loads.
func TestCrashBetweenWrites(t *testing.T) {
	ctx := context.Background()
	store, crashed, st, next := offloadedSession(t, failPutItem{}, 1)
	require.Error(t, crashed.Save(ctx, "s", next))

	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, st.Messages, got.Messages)
	assert.Equal(t, int64(1), got.Revision)
}

// lostAnswer writes the first PutItem of a session's item to DynamoDB and loses its answer, as
// a connection cut after the write does; it answers the SDK's retries with
// a 500 without sending them.
type lostAnswer struct{ puts atomic.Int32 }

func (l *lostAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isHeadPut(req) {
		return http.DefaultTransport.RoundTrip(req)
	}
	if l.puts.Add(1) == 1 {
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return nil, errors.New("read: connection reset by peer")
	}
	return &http.Response{StatusCode: http.StatusInternalServerError, Request: req,
		Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:   io.NopCloser(strings.NewReader(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"oops"}`))}, nil
}

// TestLostAnswerOfADoneWrite: a save whose item was written, its answer
// lost and the SDK's retries failing otherwise than on their condition,
// is a save: the session loads at its new state, its S3 object kept.
// Before, the object was removed, and the item pointed at nothing.
func TestLostAnswerOfADoneWrite(t *testing.T) {
	ctx := context.Background()
	store, lossy, _, next := offloadedSession(t, &lostAnswer{}, 0)
	require.NoError(t, lossy.Save(ctx, "s", next))
	assert.Equal(t, int64(2), next.Revision)

	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, next.Messages, got.Messages)
}

// TestReadsTheStoredFormat: an item as versions before segments laid it
// out loads. It holds the state of testdata/session-v1.json (State's JSON
// form, version 1), whole. A save over it writes the layout of the package
// doc: the item holds testdata/head-v1.json, the state but its messages,
// and one segment holds the messages. -update rewrites head-v1.json.
func TestReadsTheStoredFormat(t *testing.T) {
	store, f := newStore(t, nil)
	db, table := f.db, f.table
	ctx := context.Background()
	golden, err := os.ReadFile("testdata/session-v1.json")
	require.NoError(t, err)
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]dbtypes.AttributeValue{
		"id":       &dbtypes.AttributeValueMemberS{Value: "s"},
		"revision": &dbtypes.AttributeValueMemberN{Value: "7"},
		"encoding": &dbtypes.AttributeValueMemberS{Value: "json"},
		"state":    &dbtypes.AttributeValueMemberB{Value: golden},
	}})
	require.NoError(t, err)
	st, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, int64(7), st.Revision)
	require.Len(t, st.Messages, 2)
	assert.Len(t, st.Pending, 1)

	require.NoError(t, store.Save(ctx, "s", st))
	item := getItem(t, db, table, map[string]dbtypes.AttributeValue{"id": &dbtypes.AttributeValueMemberS{Value: "s"}})
	assert.Equal(t, &dbtypes.AttributeValueMemberN{Value: "8"}, item["revision"])
	stored := item["state"].(*dbtypes.AttributeValueMemberB).Value
	if *update {
		require.NoError(t, os.WriteFile("testdata/head-v1.json", stored, 0o644))
	}
	head, err := os.ReadFile("testdata/head-v1.json")
	require.NoError(t, err)
	assert.JSONEq(t, string(head), string(stored), "the item holds the state but its messages")
	segs := segmentIDs(t, item)
	require.Len(t, segs, 1, "the save over an item of before segments writes the history whole")
	seg := getItem(t, db, table, segmentKey(dynamostore.Options{}, "s", segs[0]))
	var want struct{ Messages json.RawMessage }
	require.NoError(t, json.Unmarshal(golden, &want))
	assert.JSONEq(t, string(want.Messages), string(seg["messages"].(*dbtypes.AttributeValueMemberB).Value), "the segment holds the messages")
	assert.Equal(t, &dbtypes.AttributeValueMemberN{Value: "2"}, item["segments"].(*dbtypes.AttributeValueMemberL).Value[0].(*dbtypes.AttributeValueMemberM).Value["messages"])
	again, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, st.Messages, again.Messages)
	require.Len(t, again.Pending, 1)
	assert.Equal(t, st.Pending[0].ID, again.Pending[0].ID)
	assert.JSONEq(t, string(st.Pending[0].Input), string(again.Pending[0].Input))
}

// TestRacingConversations: two conversations of one session, restored from
// the same state, Send at once, or the second at a random event of the
// first, for 100 rounds. In each, exactly one wins. The loser's error is
// ErrSessionLocked if the winner held the session. It is
// ErrSessionChanged if the winner had saved and let go of it. The stored
// history is the winner's, and it loads. It is valid too: the next round's
// requests, which bedrocktest checks, start from it.
func TestRacingConversations(t *testing.T) {
	store, _ := newStore(t, nil)
	echo, err := tools.New("echo", "Echoes.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	})
	require.NoError(t, err)
	reg, err := tools.NewRegistry(echo)
	require.NoError(t, err)
	srv := bedrocktest.NewServer(bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		last := req.Messages[len(req.Messages)-1]
		if _, ok := last.Content[0].(*types.ContentBlockMemberToolResult); ok {
			return bedrocktest.Text("done"), nil
		}
		return bedrocktest.ToolUse("", bedrocktest.Call{ID: fmt.Sprintf("t%d", len(req.Messages)), Name: "echo", Input: map[string]any{"text": "x"}}), nil
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(24, 24))
	var st *converse.State
	for round := range 100 {
		at := rng.IntN(8) // the event of the first at which the second starts; 0: at once
		var events int
		start := make(chan struct{})
		var once sync.Once
		onEvent := func(converse.Event) {
			if events++; events == at {
				once.Do(func() { close(start) })
			}
		}
		if at == 0 {
			once.Do(func() { close(start) })
		}
		convs := make([]*converse.Conversation, 2)
		for i := range convs {
			o := func(o *converse.Options) {
				o.Session = &converse.Session{Store: store, ID: "s"}
				if i == 0 {
					o.OnEvent = onEvent
				}
			}
			if st == nil {
				convs[i] = converse.New(srv.Client(), claude, reg, o)
			} else {
				convs[i], err = converse.Restore(srv.Client(), reg, st, o)
				require.NoError(t, err)
			}
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		wg.Go(func() {
			_, errs[0] = convs[0].Send(ctx, fmt.Sprintf("round %d from 0", round))
			once.Do(func() { close(start) })
		})
		wg.Go(func() {
			<-start
			_, errs[1] = convs[1].Send(ctx, fmt.Sprintf("round %d from 1", round))
		})
		wg.Wait()
		winner := -1
		for i, err := range errs {
			if err == nil {
				require.Equal(t, -1, winner, "round %d: one winner", round)
				winner = i
			} else {
				require.True(t, errors.Is(err, converse.ErrSessionLocked) || errors.Is(err, converse.ErrSessionChanged), "round %d: conversation %d: %v", round, i, err)
			}
		}
		if winner == -1 {
			again, _ := store.Load(ctx, "s")
			t.Logf("at=%d st=%d now=%d h0=%d h1=%d stored=%d", at, st.Revision, again.Revision, len(convs[0].History()), len(convs[1].History()), len(again.Messages))
		}
		require.NotEqual(t, -1, winner, "round %d: a winner: %v", round, errs)
		st, err = store.Load(ctx, "s")
		require.NoError(t, err, "round %d", round)
		require.Equal(t, convs[winner].History(), st.Messages, "round %d: the stored history is the winner's", round)
		require.Equal(t, convs[winner].State().Revision, st.Revision)
	}
	assert.Len(t, st.Messages, 100*4)
}
