package dynamostore_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"testing"
	"time"

	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/dynamostore"
)

// leased is the holder and the end of the lease in the item of the
// session "s", or "" and the zero time.
func leased(t *testing.T, f fixture) (string, time.Time) {
	t.Helper()
	item := getItem(t, f.db, f.table, map[string]dbtypes.AttributeValue{"id": &dbtypes.AttributeValueMemberS{Value: "s"}})
	h, ok := item["holder"].(*dbtypes.AttributeValueMemberS)
	if !ok {
		return "", time.Time{}
	}
	ms, err := strconv.ParseInt(item["heldUntil"].(*dbtypes.AttributeValueMemberN).Value, 10, 64)
	require.NoError(t, err)
	return h.Value, time.UnixMilli(ms)
}

// TestHold: while a conversation holds a session, another Hold of it fails
// at once, by another Store of the table or by the same. The error is
// ErrSessionLocked, naming the holder (host/pid/token) and the end of its
// lease, which is in the item. release removes the lease, and the item if
// no save followed. The session can then be held.
func TestHold(t *testing.T) {
	store, f := newStore(t, nil)
	other := dynamostore.New(f.db, f.table, f.opts...)
	ctx := context.Background()
	release, err := store.Hold(ctx, "s", &converse.State{})
	require.NoError(t, err)
	holder, until := leased(t, f)
	host, _ := os.Hostname()
	assert.Regexp(t, fmt.Sprintf(`^%s/%d/[0-9a-f]{16}$`, host, os.Getpid()), holder)
	assert.WithinDuration(t, time.Now().Add(dynamostore.DefaultLease), until, 5*time.Second)
	_, err = store.Load(ctx, "s")
	require.ErrorIs(t, err, fs.ErrNotExist, "a lease alone is no session")

	for _, s := range []*dynamostore.Store{other, store} {
		_, err = s.Hold(ctx, "s", &converse.State{})
		require.ErrorIs(t, err, converse.ErrSessionLocked)
		assert.EqualError(t, err, fmt.Sprintf(`dynamostore: session in use: "s" is held by %s until %s`, holder, until.UTC().Format(time.RFC3339)))
	}
	require.ErrorIs(t, other.Save(ctx, "s", textState("hello")), converse.ErrSessionLocked, "a save without the lease")
	st := textState("hello")
	require.NoError(t, store.Save(ctx, "s", st), "a save with it")
	h, _ := leased(t, f)
	assert.Equal(t, holder, h, "the save keeps the lease")
	release()
	h, _ = leased(t, f)
	assert.Empty(t, h, "release removes the lease")

	release, err = other.Hold(ctx, "s", st)
	require.NoError(t, err)
	release()
	release, err = other.Hold(ctx, "t", &converse.State{})
	require.NoError(t, err)
	release()
	assert.Nil(t, getItem(t, f.db, f.table, map[string]dbtypes.AttributeValue{"id": &dbtypes.AttributeValueMemberS{Value: "t"}}), "a lease no save followed leaves no item")
}

// TestLeaseExpiry: once a holder's lease ends unrenewed, another takes the
// session over. Here another Store's clock is past the lease, as a crashed
// holder's would be. The first's saves then fail with ErrSessionChanged
// saying it was taken over, before the second saved and after. The item
// keeps the second's.
func TestLeaseExpiry(t *testing.T) {
	store, f := newStore(t, nil)
	ctx := context.Background()
	st := textState("hello")
	require.NoError(t, store.Save(ctx, "s", st))
	release, err := store.Hold(ctx, "s", st)
	require.NoError(t, err)
	defer release()

	later := dynamostore.New(f.db, f.table, append(f.opts, func(o *dynamostore.Options) {
		o.Now = func() time.Time { return time.Now().Add(dynamostore.DefaultLease + time.Second) }
	})...)
	taken, err := later.Load(ctx, "s")
	require.NoError(t, err)
	releaseLater, err := later.Hold(ctx, "s", taken)
	require.NoError(t, err, "the lease ended")
	defer releaseLater()
	holder, _ := leased(t, f)

	st.Messages = textState("hello", "mine").Messages
	err = store.Save(ctx, "s", st)
	require.ErrorIs(t, err, converse.ErrSessionChanged, "taken over, though not yet saved")
	assert.EqualError(t, err, fmt.Sprintf(`dynamostore: session changed: "s" was taken over by %s: this run's lease lapsed, unrenewed for 30s; Load and Restore it again`, holder))
	taken.Messages = textState("hello", "taken over").Messages
	require.NoError(t, later.Save(ctx, "s", taken))
	require.ErrorIs(t, store.Save(ctx, "s", st), converse.ErrSessionChanged)
	got, err := store.Load(ctx, "s")
	require.NoError(t, err)
	assert.Equal(t, taken.Messages, got.Messages)
}

// TestLeaseRenewal: a run held for several times its lease keeps the
// session, renewed every third of the lease, until it lets go.
func TestLeaseRenewal(t *testing.T) {
	// Renewed every third of it: a busy machine has most of a lease to
	// make each renewal's round trip.
	const lease = 2 * time.Second
	store, f := newStore(t, nil, func(o *dynamostore.Options) { o.Lease = lease })
	other := dynamostore.New(f.db, f.table, f.opts...)
	ctx := context.Background()
	release, err := store.Hold(ctx, "s", &converse.State{})
	require.NoError(t, err)
	_, first := leased(t, f)
	time.Sleep(5 * lease / 2)
	_, err = other.Hold(ctx, "s", &converse.State{})
	require.ErrorIs(t, err, converse.ErrSessionLocked, "held past its first lease")
	_, renewed := leased(t, f)
	assert.True(t, renewed.After(first.Add(lease)), "renewed: %v, then %v", first, renewed)
	release()
	release, err = other.Hold(ctx, "s", &converse.State{})
	require.NoError(t, err)
	release()
}
