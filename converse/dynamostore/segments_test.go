package dynamostore_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/dynamostore"
)

// writeCounter counts the bytes of the DynamoDB write requests it sends:
// their bodies, as the SDK encodes them.
type writeCounter struct{ bytes atomic.Int64 }

func (c *writeCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Header.Get("X-Amz-Target") {
	case "DynamoDB_20120810.PutItem", "DynamoDB_20120810.UpdateItem", "DynamoDB_20120810.BatchWriteItem", "DynamoDB_20120810.DeleteItem":
		c.bytes.Add(req.ContentLength)
	}
	return http.DefaultTransport.RoundTrip(req)
}

// through is a Store of f's table whose DynamoDB client sends through
// transport, with attempts attempts (0: the SDK's default).
func (f fixture) through(transport http.RoundTripper, attempts int, optFns ...func(*dynamostore.Options)) *dynamostore.Store {
	o := f.db.Options()
	o.HTTPClient = &http.Client{Transport: transport}
	if attempts > 0 {
		o.RetryMaxAttempts = attempts
	}
	return dynamostore.New(dynamodb.New(o), f.table, append(f.opts, optFns...)...)
}

// items is every item of f's table.
func (f fixture) items(t *testing.T) []map[string]dbtypes.AttributeValue {
	t.Helper()
	out, err := f.db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(f.table), ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	return out.Items
}

// headOf is the item of the session id of f's table (no key prefix or sort
// key).
func (f fixture) headOf(t *testing.T, id string) map[string]dbtypes.AttributeValue {
	t.Helper()
	return getItem(t, f.db, f.table, map[string]dbtypes.AttributeValue{"id": &dbtypes.AttributeValueMemberS{Value: id}})
}

// step adds a user message and a reply of n bytes to st's history.
func step(st *converse.State, n int) {
	st.Messages = append(st.Messages, textState("next", strings.Repeat("r", n)).Messages...)
}

// TestSaveWritesTheStep: a save after many steps writes its step, not the
// history. With a history of 200 KB, a 1 KB step's save sends under 5 KB
// to DynamoDB: the step in base64, and the item with its list of
// segments (under 3 KB at 32). The session keeps one segment a step.
func TestSaveWritesTheStep(t *testing.T) {
	_, f := newStore(t, nil)
	var counter writeCounter
	store := f.through(&counter, 0)
	ctx := context.Background()
	st := textState("go")
	require.NoError(t, store.Save(ctx, "s", st))
	for range 20 {
		step(st, 10<<10)
		require.NoError(t, store.Save(ctx, "s", st))
	}
	before := counter.bytes.Load()
	step(st, 1<<10)
	require.NoError(t, store.Save(ctx, "s", st))
	written := counter.bytes.Load() - before
	assert.Less(t, written, int64(5<<10), "bytes sent by the save of a 1 KB step")
	assert.Len(t, segmentIDs(t, f.headOf(t, "s")), 22)
	assert.Len(t, f.items(t), 23, "the item and its segments, no more")

	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, st.Messages, got.Messages)
	assert.Equal(t, st.Revision, got.Revision)
}

// TestWholeSaves: a save whose history does not extend the last one's (a
// trim, a rewrite) writes it whole as one segment. Past 32 segments, a
// save compacts them into one. Each deletes the segments it replaced.
func TestWholeSaves(t *testing.T) {
	store, f := newStore(t, nil)
	ctx := context.Background()
	st := textState("go", "ok")
	require.NoError(t, store.Save(ctx, "s", st))
	step(st, 10)
	require.NoError(t, store.Save(ctx, "s", st))
	require.Len(t, segmentIDs(t, f.headOf(t, "s")), 2)

	st.Messages = st.Messages[2:] // a trim
	require.NoError(t, store.Save(ctx, "s", st))
	assert.Len(t, segmentIDs(t, f.headOf(t, "s")), 1)
	assert.Len(t, f.items(t), 2)

	most := 0
	for i := range 40 {
		step(st, 10)
		require.NoError(t, store.Save(ctx, "s", st), "step %d", i)
		n := len(segmentIDs(t, f.headOf(t, "s")))
		most = max(most, n)
		require.Len(t, f.items(t), n+1, "step %d: the replaced segments are deleted", i)
	}
	assert.Equal(t, 32, most)
	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, st.Messages, got.Messages)
}

// TestRacingSegmentWriters: two writers extend one loaded state. The first
// to save wins; the second fails with ErrSessionChanged, and deletes its
// segment, which no item points at. The session is the winner's.
func TestRacingSegmentWriters(t *testing.T) {
	store, f := newStore(t, nil)
	ctx := context.Background()
	require.NoError(t, store.Save(ctx, "s", textState("go", "ok")))
	a, err := store.Load(ctx, "s")
	require.NoError(t, err)
	b, err := store.Load(ctx, "s")
	require.NoError(t, err)
	step(a, 10)
	step(b, 20)
	require.NoError(t, store.Save(ctx, "s", a))
	require.ErrorIs(t, store.Save(ctx, "s", b), converse.ErrSessionChanged)

	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, a.Messages, got.Messages)
	assert.Len(t, f.items(t), 3, "the item and the winner's two segments")
}

// failHeadAndDeletes fails the writes of a session's item and every
// delete, as a process that died after writing a segment would never send
// them.
type failHeadAndDeletes struct{}

func (failHeadAndDeletes) RoundTrip(req *http.Request) (*http.Response, error) {
	if isHeadPut(req) || req.Header.Get("X-Amz-Target") == "DynamoDB_20120810.BatchWriteItem" {
		return nil, errors.New("the process died")
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestCrashBetweenSegmentAndItem: a save that writes its segment but not
// the session's item leaves the session at its previous state, which
// loads and saves on. The segment no item points at is deleted if the
// save knows the item was not written. If it died, the segment is left,
// with a time to live if the Store has one.
func TestCrashBetweenSegmentAndItem(t *testing.T) {
	for _, tt := range []struct {
		name      string
		transport http.RoundTripper
		orphans   int
	}{
		{name: "failed", transport: failPutItem{}, orphans: 0},
		{name: "died", transport: failHeadAndDeletes{}, orphans: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, f := newStore(t, nil, func(o *dynamostore.Options) { o.TTL = time.Hour })
			ctx := context.Background()
			st := textState("go", "ok")
			require.NoError(t, store.Save(ctx, "s", st))
			next := *st
			step(&next, 10)
			require.Error(t, f.through(tt.transport, 1).Save(ctx, "s", &next))

			got, err := store.Load(ctx, "s")
			require.NoError(t, err)
			assert.Equal(t, st.Messages, got.Messages)
			assert.Equal(t, int64(1), got.Revision)
			items := f.items(t)
			require.Len(t, items, 2+tt.orphans)
			for _, item := range items {
				assert.Contains(t, item, "expires", "every item has a time to live")
			}
			step(got, 10)
			require.NoError(t, store.Save(ctx, "s", got))
			again, err := store.Load(ctx, "s")
			require.NoError(t, err)
			assert.Equal(t, got.Messages, again.Messages)
		})
	}
}

// TestSegmentsOutliveTheSession: with a TTL, a segment expires twice the
// TTL after its save, and the session's item the TTL after the last save.
// A save on a session whose oldest segment would expire before it writes
// the history whole, so that no segment expires under a live session.
func TestSegmentsOutliveTheSession(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func(o *dynamostore.Options) { o.TTL, o.Now = time.Hour, func() time.Time { return now } }
	store, f := newStore(t, nil, clock)
	ctx := context.Background()
	st := textState("go", "ok")
	require.NoError(t, store.Save(ctx, "s", st))
	now = now.Add(30 * time.Minute)
	step(st, 10)
	require.NoError(t, store.Save(ctx, "s", st))
	assert.Len(t, segmentIDs(t, f.headOf(t, "s")), 2)

	now = now.Add(40 * time.Minute) // the first segment expires in 50 minutes, the session in an hour
	step(st, 10)
	require.NoError(t, store.Save(ctx, "s", st))
	head := f.headOf(t, "s")
	assert.Len(t, segmentIDs(t, head), 1, "written whole")
	assert.Equal(t, &dbtypes.AttributeValueMemberN{Value: "1800007800"}, head["expires"])
	for _, item := range f.items(t) {
		if _, isHead := item["revision"]; !isHead {
			assert.Equal(t, &dbtypes.AttributeValueMemberN{Value: "1800011400"}, item["expires"])
		}
	}
	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, st.Messages, got.Messages)
}

// TestStateInS3: a state whose part outside the history is past 400 KB
// (a long tool result of a turn still open) goes to S3, the session's item
// pointing at it, and loads back.
func TestStateInS3(t *testing.T) {
	store, f := newStore(t, http.DefaultTransport)
	ctx := context.Background()
	golden, err := os.ReadFile("testdata/session-v1.json")
	require.NoError(t, err)
	big := strings.Replace(string(golden), `"text": "2"`, `"text": "`+strings.Repeat("2", 500<<10)+`"`, 1)
	var st converse.State
	require.NoError(t, st.UnmarshalJSON([]byte(big)))
	require.NoError(t, store.Save(ctx, "s", &st))
	head := f.headOf(t, "s")
	assert.NotContains(t, head, "state")
	assert.Contains(t, head["key"].(*dbtypes.AttributeValueMemberS).Value, "sessions/s/00000000000000000001-")

	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	want, err := st.MarshalJSON()
	require.NoError(t, err)
	gotJSON, err := got.MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(gotJSON))
}
