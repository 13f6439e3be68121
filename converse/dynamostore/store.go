package dynamostore

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/tooluse/bedrock/converse"
)

// MaxItemSize is DynamoDB's limit on the size of an item, attribute names
// included: a larger one is offloaded to S3.
const MaxItemSize = 400 * 1024

// maxState bounds what Load reads of a state, from an item or an object,
// before and after gzip: it is what a server returns, not trusted.
const maxState = 1 << 30

// ErrItemTooLarge is the error of a Save of a state past MaxItemSize with
// no S3 bucket to offload it to.
var ErrItemTooLarge = errors.New("item too large")

// Options configure a Store.
type Options struct {
	// PartitionKey is the name of the table's partition key: "id" if
	// empty.
	PartitionKey string
	// SortKey is the name of the table's sort key, if it has one: its
	// value is "session".
	SortKey string
	// KeyPrefix goes before the session id in the partition key, so that
	// sessions can share a table with other items.
	KeyPrefix string
	// TTL, if positive, is how long a session lives after its last save:
	// each save sets TTLAttribute to then, and Load treats a session past
	// it as absent.
	TTL time.Duration
	// TTLAttribute is the name of the attribute holding the expiry:
	// "expires" if empty.
	TTLAttribute string
	// S3, Bucket and Prefix are where states past MaxItemSize go; without
	// S3 such a Save fails with ErrItemTooLarge.
	S3     *s3.Client
	Bucket string
	Prefix string
	// Gzip compresses the state, in the item or the object.
	Gzip bool
	// Lease is how long a Hold holds a session without renewing it, and
	// so how long a crashed run keeps others out: DefaultLease if zero.
	Lease time.Duration
	// Now is the clock of leases and expiries: time.Now if nil.
	Now func() time.Time
}

// Store is a converse.Store keeping each session in an item of a DynamoDB
// table. Its methods are safe for concurrent use.
type Store struct {
	db    *dynamodb.Client
	table string
	opts  Options

	mu      sync.Mutex
	holders map[string]string // session id → this Store's holder of it
}

// New returns a Store of the table through client.
func New(client *dynamodb.Client, table string, optFns ...func(*Options)) *Store {
	s := &Store{db: client, table: table}
	for _, fn := range optFns {
		fn(&s.opts)
	}
	if s.opts.PartitionKey == "" {
		s.opts.PartitionKey = "id"
	}
	if s.opts.TTLAttribute == "" {
		s.opts.TTLAttribute = "expires"
	}
	return s
}

// key is the item's key of the session id.
func (s *Store) key(id string) map[string]types.AttributeValue {
	k := map[string]types.AttributeValue{s.opts.PartitionKey: &types.AttributeValueMemberS{Value: s.opts.KeyPrefix + id}}
	if s.opts.SortKey != "" {
		k[s.opts.SortKey] = &types.AttributeValueMemberS{Value: "session"}
	}
	return k
}

// Load reads the state of the session id, at its revision. An absent or
// expired session is an error matching fs.ErrNotExist.
func (s *Store) Load(ctx context.Context, id string) (*converse.State, error) {
	if id == "" {
		return nil, errors.New("dynamostore: load session: no session id")
	}
	// A state's object and segments are deleted once a newer item is
	// written: a Load between the two reads reads the newer item again.
	for range 3 {
		st, err := s.load(ctx, id)
		if !errors.Is(err, errPartGone) {
			return st, err
		}
	}
	return nil, fmt.Errorf("dynamostore: load session %q: the state's segments or S3 object keep being replaced", id)
}

func (s *Store) load(ctx context.Context, id string) (*converse.State, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: s.key(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamostore: load session %q: %w", id, err)
	}
	if _, saved := out.Item["revision"]; !saved || s.expired(out.Item) { // a lease alone holds no session
		return nil, fmt.Errorf("dynamostore: load session %q: %w", id, fs.ErrNotExist)
	}
	rev, err := numberOf(out.Item, "revision")
	if err != nil {
		return nil, fmt.Errorf("dynamostore: load session %q: %w", id, err)
	}
	st, w, err := s.state(ctx, id, out.Item)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: load session %q: %w", id, err)
	}
	st.Revision = rev
	if writer, ok := out.Item["writer"].(*types.AttributeValueMemberS); ok {
		w.writer = writer.Value
		st.StoreData = w
	}
	return st, nil
}

// state reads the state of the session's item: whole in its state, as
// versions before segments wrote it, or without its history, which its
// segments hold.
func (s *Store) state(ctx context.Context, id string, item map[string]types.AttributeValue) (*converse.State, written, error) {
	var w written
	b, err := s.payload(ctx, item, "state")
	if err != nil {
		return nil, w, err
	}
	if v, ok := item["segments"]; ok {
		if w.segments, err = segmentsOf(v); err != nil {
			return nil, w, err
		}
		msgs, err := s.readSegments(ctx, id, w.segments)
		if err != nil {
			return nil, w, err
		}
		if b, err = withMessages(b, msgs); err != nil {
			return nil, w, err
		}
		w.segmented = true
	}
	var st converse.State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, w, err
	}
	if w.segmented {
		w.messages = st.Messages
	}
	return &st, w, nil
}

// written is a State's StoreData: what the Store knows of the item it was
// loaded from or saved as. A Save on top of it requires its writer token,
// so that a session removed (by DynamoDB's TTL, say) and made anew at the
// same revision is not mistaken for the one the state came from. A Save
// whose history extends messages adds one segment to segments.
type written struct {
	writer    string
	segmented bool              // the item is of the layout with segments
	messages  []brtypes.Message // the history its segments hold
	segments  []segment
}

// expired reports whether the item's TTL has passed.
func (s *Store) expired(item map[string]types.AttributeValue) bool {
	if _, ok := item[s.opts.TTLAttribute]; !ok {
		return false
	}
	t, err := numberOf(item, s.opts.TTLAttribute)
	return err == nil && t <= s.now().Unix()
}

// payload is the JSON of the item's attribute attr, from the item or its
// object.
func (s *Store) payload(ctx context.Context, item map[string]types.AttributeValue, attr string) ([]byte, error) {
	var b []byte
	if v, ok := item[attr].(*types.AttributeValueMemberB); ok {
		b = v.Value
	} else {
		bucket, bok := item["bucket"].(*types.AttributeValueMemberS)
		key, kok := item["key"].(*types.AttributeValueMemberS)
		if !bok || !kok {
			return nil, fmt.Errorf("the item has neither %s nor a bucket and key", attr)
		}
		if s.opts.S3 == nil {
			return nil, fmt.Errorf("the state is in s3://%s/%s, and no S3 client is set", bucket.Value, key.Value)
		}
		obj, err := s.opts.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket.Value), Key: aws.String(key.Value)})
		var missing *s3types.NoSuchKey
		if errors.As(err, &missing) {
			return nil, errPartGone
		}
		if err != nil {
			return nil, fmt.Errorf("s3://%s/%s: %w", bucket.Value, key.Value, err)
		}
		defer obj.Body.Close()
		if b, err = readAtMost(obj.Body); err != nil {
			return nil, fmt.Errorf("s3://%s/%s: %w", bucket.Value, key.Value, err)
		}
	}
	switch enc, _ := item["encoding"].(*types.AttributeValueMemberS); {
	case enc == nil || enc.Value == "json":
		return b, nil
	case enc.Value == "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		b, err := readAtMost(zr)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return b, nil
	default:
		return nil, fmt.Errorf("unknown encoding %q", enc.Value)
	}
}

func readAtMost(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxState+1))
	if err == nil && len(b) > maxState {
		err = fmt.Errorf("the state is over %d bytes", maxState)
	}
	return b, err
}

// number is the number attribute of n.
func number(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// numberOf reads the number attribute name of item.
func numberOf(item map[string]types.AttributeValue, name string) (int64, error) {
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("the item has no number %q", name)
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the item's %q: %w", name, err)
	}
	return n, nil
}

// Save writes st as the session id's item, at the revision after
// st.Revision. The item must still be at st.Revision and the save st came
// from. For revision 0, it must be absent or expired; the revision then
// goes on from the expired one's. Otherwise Save fails with an error
// matching converse.ErrSessionChanged.
// A history that extends the one st was loaded or last saved with gets one
// segment of its new messages; any other is written whole, as one segment
// (see the package doc). A segment or item past MaxItemSize goes to S3
// first.
func (s *Store) Save(ctx context.Context, id string, st *converse.State) error {
	if id == "" {
		return errors.New("dynamostore: save session: no session id")
	}
	base, err := s.base(ctx, id, st)
	if err != nil {
		return fmt.Errorf("dynamostore: save session %q: %w", id, err)
	}
	h := head{id: id, rev: base + 1, writer: token(), holder: s.holder(id)}
	h.segments, h.keep = s.kept(st)
	state, step, err := split(st, h.keep)
	if err != nil {
		return fmt.Errorf("dynamostore: save session %q: %w", id, err)
	}
	if h.keep < len(st.Messages) {
		seg, err := s.putSegment(ctx, id, h.rev, h.writer, step, len(st.Messages)-h.keep)
		if err != nil {
			return err
		}
		h.segments, h.added = append(h.segments, seg), []segment{seg}
	}
	if err := s.headItem(ctx, &h, state); err != nil {
		s.dropSegments(ctx, id, h.added)
		return err
	}
	old, err := s.putHead(ctx, st, base, &h)
	if err != nil {
		return err
	}
	st.Revision, st.StoreData = h.rev, written{writer: h.writer, segmented: true, messages: st.Messages, segments: h.segments}
	bucket, bok := old["bucket"].(*types.AttributeValueMemberS)
	key, kok := old["key"].(*types.AttributeValueMemberS)
	if bok && kok && key.Value != h.object {
		s.remove(ctx, bucket.Value, key.Value)
	}
	s.dropSegments(ctx, id, replaced(old, h.segments))
	return nil
}

// head is the session's item a Save writes.
type head struct {
	id       string
	rev      int64
	writer   string
	holder   string    // this Store's lease on the session, or ""
	keep     int       // the messages of the history that segments kept hold
	segments []segment // those the item points at
	added    []segment // those of them this save wrote
	item     map[string]types.AttributeValue
	object   string // the S3 object holding the item's state, or ""
}

// base is the revision a save of st goes on from: st's, or for a new
// state, an expired item's. Revisions never restart, so that a writer that
// loaded the expired session finds it changed.
func (s *Store) base(ctx context.Context, id string, st *converse.State) (int64, error) {
	if st.Revision == 0 && s.opts.TTL > 0 {
		return s.expiredRevision(ctx, id)
	}
	return st.Revision, nil
}

// headItem makes h's item, of the state's JSON form without messages.
func (s *Store) headItem(ctx context.Context, h *head, state []byte) error {
	b, enc := s.encode(state)
	h.item = s.key(h.id)
	h.item["revision"] = number(h.rev)
	h.item["encoding"] = str(enc)
	if s.opts.TTL > 0 {
		h.item[s.opts.TTLAttribute] = number(s.now().Add(s.opts.TTL).Unix())
	}
	h.item["writer"] = str(h.writer)
	if h.holder != "" { // the save renews the lease it keeps
		h.item["holder"] = str(h.holder)
		h.item["heldUntil"] = s.leaseEnd()
	}
	h.item["segments"] = segmentsAttr(h.segments)
	var err error
	h.object, err = s.place(ctx, h.id, h.rev, h.item, "state", enc, b)
	return err
}

// putHead writes h's item if the session's is still the one st names, and
// returns the item it replaced. A failed write removes what only h's item
// would point at: its object and its new segment.
func (s *Store) putHead(ctx context.Context, st *converse.State, base int64, h *head) (map[string]types.AttributeValue, error) {
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: h.item, ReturnValues: types.ReturnValueAllOld,
		ExpressionAttributeNames: map[string]string{"#h": "holder"}, ExpressionAttributeValues: map[string]types.AttributeValue{}}
	lease := "#h = :h" // a holder that lost its lease must not save
	if h.holder != "" {
		in.ExpressionAttributeValues[":h"] = str(h.holder)
	} else {
		in.ExpressionAttributeNames["#hu"] = "heldUntil"
		lease = s.leaseFree(in.ExpressionAttributeValues)
	}
	in.ConditionExpression = aws.String(lease + " AND " + s.onRevision(st, base, in.ExpressionAttributeNames, in.ExpressionAttributeValues))
	out, err := s.db.PutItem(ctx, in)
	if err == nil {
		return out.Attributes, nil
	}
	// The write may have been done with its answer lost: the SDK's retry
	// then fails on its condition, or with another error.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if written, known := s.wrote(wctx, h.id, h.rev, h.writer); written {
		return nil, nil
	} else if known {
		// No item points at them: remove them. Unknown, they stay (see
		// the package doc), as the item may point at them.
		if h.object != "" {
			s.remove(wctx, s.opts.Bucket, h.object)
		}
		s.dropSegments(wctx, h.id, h.added)
	}
	if failed := (*types.ConditionalCheckFailedException)(nil); errors.As(err, &failed) {
		return nil, s.conflict(ctx, h.id, st.Revision, h.holder)
	}
	return nil, fmt.Errorf("dynamostore: save session %q: %w", h.id, err)
}

// encode is b as the item keeps it, and the encoding that says how.
func (s *Store) encode(b []byte) ([]byte, string) {
	if !s.opts.Gzip {
		return b, "json"
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b) // a bytes.Buffer does not fail
	zw.Close()
	return buf.Bytes(), "gzip"
}

// place puts b, encoded enc, in item as its attribute attr. Past
// MaxItemSize, it writes b to S3 instead, the item pointing at it, and
// returns the object's key.
func (s *Store) place(ctx context.Context, id string, rev int64, item map[string]types.AttributeValue, attr, enc string, b []byte) (string, error) {
	size := itemSize(item) + len(attr) + len(b)
	if size <= MaxItemSize {
		item[attr] = &types.AttributeValueMemberB{Value: b}
		return "", nil
	}
	object, err := s.offload(ctx, id, rev, enc, b, size)
	if err != nil {
		return "", err
	}
	item["bucket"], item["key"] = str(s.opts.Bucket), str(object)
	return object, nil
}

// onRevision is the condition that the item is the one st was loaded from
// or saved as. For a new state, there must be none (base 0) or an expired
// one at revision base. It adds its names and values.
func (s *Store) onRevision(st *converse.State, base int64, names map[string]string, values map[string]types.AttributeValue) string {
	names["#r"] = "revision"
	switch w, known := st.StoreData.(written); {
	case base == 0:
		return "attribute_not_exists(#r)"
	case st.Revision == 0: // over an expired session, still expired
		names["#t"] = s.opts.TTLAttribute
		values[":r"], values[":expiredBy"] = number(base), number(s.now().Unix())
		return "#r = :r AND #t <= :expiredBy"
	case known:
		names["#w"] = "writer"
		values[":r"], values[":w"] = number(base), &types.AttributeValueMemberS{Value: w.writer}
		return "#r = :r AND #w = :w"
	default: // an item of a version before writer tokens
		values[":r"] = number(base)
		return "#r = :r"
	}
}

// expiredRevision is the revision of the session id's item if it expired,
// or 0.
func (s *Store) expiredRevision(ctx context.Context, id string) (int64, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: s.key(id), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("#r, #t"), ExpressionAttributeNames: map[string]string{"#r": "revision", "#t": s.opts.TTLAttribute}})
	if err != nil || out.Item == nil || !s.expired(out.Item) {
		return 0, err
	}
	if _, ok := out.Item["revision"]; !ok {
		return 0, nil
	}
	return numberOf(out.Item, "revision")
}

// wrote reports whether the session's item is the one the save of token
// writer wrote at revision rev, and whether that is known. known is false
// if the item could not be read. It is needed because the SDK retries a
// write whose answer was lost. The retry fails, on its condition or
// otherwise, after the write was done.
func (s *Store) wrote(ctx context.Context, id string, rev int64, writer string) (written, known bool) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: s.key(id), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("#r, #w"), ExpressionAttributeNames: map[string]string{"#r": "revision", "#w": "writer"}})
	if err != nil {
		return false, false
	}
	if out.Item == nil {
		return false, true
	}
	got, err := numberOf(out.Item, "revision")
	w, _ := out.Item["writer"].(*types.AttributeValueMemberS)
	return err == nil && got == rev && w != nil && w.Value == writer, true
}

// token is a random hex string, unique to a save.
func token() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// offload writes the state b, of an item of size bytes, to S3 under a key
// of its own, and returns the key.
func (s *Store) offload(ctx context.Context, id string, rev int64, enc string, b []byte, size int) (string, error) {
	if s.opts.S3 == nil || s.opts.Bucket == "" {
		return "", fmt.Errorf("dynamostore: save session %q: %w: %d KB, past DynamoDB's %d KB, and no S3 bucket is set to offload it to", id, ErrItemTooLarge, (size+1023)/1024, MaxItemSize/1024)
	}
	key := fmt.Sprintf("%s%s/%020d-%s.%s", s.opts.Prefix, url.PathEscape(s.opts.KeyPrefix+id), rev, token(), enc)
	_, err := s.opts.S3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s.opts.Bucket), Key: aws.String(key), Body: bytes.NewReader(b)})
	if err != nil {
		return "", fmt.Errorf("dynamostore: save session %q: s3://%s/%s: %w", id, s.opts.Bucket, key, err)
	}
	return key, nil
}

// remove deletes an object no item points at any longer. A failure leaves
// it for the bucket's lifecycle rule: the save it follows is done.
func (s *Store) remove(ctx context.Context, bucket, key string) {
	if s.opts.S3 != nil {
		s.opts.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	}
}

// itemSize is the size DynamoDB counts of item's names and values, with
// numbers at their largest, 21 bytes, and 3 bytes for each list or map.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberM:
		return 3 + itemSize(v.Value)
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	default:
		return 21
	}
}
