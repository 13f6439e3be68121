package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/internal/message"
)

// maxSegments bounds the segments of a session. A save that would add one
// past it writes the history whole, as one segment. It is under
// BatchGetItem's 100 keys, so that a Load reads them in one request.
const maxSegments = 32

// segment is what the session's item records of one of its segments.
type segment struct {
	id       string // its key's suffix: the revision and writer token of the save that wrote it
	messages int    // how many messages of the history it holds
	expires  int64  // its time to live, in Unix seconds; 0 without Options.TTL
	bucket   string // with object: the S3 object holding its messages, if offloaded
	object   string
}

// segmentKey is the item key of the segment seg of the session id.
func (s *Store) segmentKey(id, seg string) map[string]types.AttributeValue {
	if s.opts.SortKey == "" {
		return map[string]types.AttributeValue{s.opts.PartitionKey: str(s.opts.KeyPrefix + id + "#segment#" + seg)}
	}
	return map[string]types.AttributeValue{
		s.opts.PartitionKey: str(s.opts.KeyPrefix + id),
		s.opts.SortKey:      str("segment#" + seg),
	}
}

// keyOf is a string naming the key of item, to match the items a
// BatchGetItem returns with the keys asked for.
func (s *Store) keyOf(item map[string]types.AttributeValue) string {
	pk, _ := item[s.opts.PartitionKey].(*types.AttributeValueMemberS)
	sk, _ := item[s.opts.SortKey].(*types.AttributeValueMemberS)
	var k string
	if pk != nil {
		k = pk.Value
	}
	if sk != nil {
		k += "\x00" + sk.Value
	}
	return k
}

func str(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }

// segmentsAttr is the session item's list of its segments.
func segmentsAttr(segs []segment) types.AttributeValue {
	l := make([]types.AttributeValue, 0, len(segs))
	for _, seg := range segs {
		m := map[string]types.AttributeValue{"id": str(seg.id), "messages": number(int64(seg.messages))}
		if seg.expires > 0 {
			m["expires"] = number(seg.expires)
		}
		if seg.object != "" {
			m["bucket"], m["key"] = str(seg.bucket), str(seg.object)
		}
		l = append(l, &types.AttributeValueMemberM{Value: m})
	}
	return &types.AttributeValueMemberL{Value: l}
}

// segmentsOf reads the list segmentsAttr wrote.
func segmentsOf(v types.AttributeValue) ([]segment, error) {
	l, ok := v.(*types.AttributeValueMemberL)
	if !ok || len(l.Value) > maxSegments {
		return nil, fmt.Errorf("the item's segments are not a list of at most %d", maxSegments)
	}
	segs := make([]segment, 0, len(l.Value))
	for i, v := range l.Value {
		m, _ := v.(*types.AttributeValueMemberM)
		if m == nil {
			return nil, fmt.Errorf("the item's segment %d is not a map", i)
		}
		id, _ := m.Value["id"].(*types.AttributeValueMemberS)
		n, err := numberOf(m.Value, "messages")
		if id == nil || err != nil || n < 0 {
			return nil, fmt.Errorf("the item's segment %d has no id or number of messages", i)
		}
		seg := segment{id: id.Value, messages: int(n)}
		if _, ok := m.Value["expires"]; ok {
			seg.expires, _ = numberOf(m.Value, "expires")
		}
		bucket, _ := m.Value["bucket"].(*types.AttributeValueMemberS)
		key, _ := m.Value["key"].(*types.AttributeValueMemberS)
		if bucket != nil && key != nil {
			seg.bucket, seg.object = bucket.Value, key.Value
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// kept returns the segments of st's last save or load that st's save
// keeps, and how many messages they hold. It keeps none, so that the save
// writes the history whole, if st's history does not extend theirs (a
// trim, a rewrite, another store's state). It keeps none too past
// maxSegments, or when a segment would expire before the session.
func (s *Store) kept(st *converse.State) ([]segment, int) {
	w, ok := st.StoreData.(written)
	if !ok || !w.segmented || st.Revision == 0 || len(w.segments) >= maxSegments || len(st.Messages) < len(w.messages) {
		return nil, 0
	}
	for i, m := range w.messages {
		if !message.Same(m, st.Messages[i]) {
			return nil, 0
		}
	}
	expires := s.now().Add(s.opts.TTL).Unix()
	for _, seg := range w.segments {
		if (seg.expires > 0) != (s.opts.TTL > 0) || seg.expires > 0 && seg.expires < expires {
			return nil, 0
		}
	}
	return slices.Clone(w.segments), len(w.messages)
}

// split returns st's JSON form without its messages, and the JSON array of
// its messages from the one at keep on. Only these are encoded: a save's
// work follows the step, not the history.
func split(st *converse.State, keep int) (head, step []byte, err error) {
	part := *st // its JSON form from keep on: the open turn's results are not st's to read
	part.Messages = st.Messages[keep:]
	form, err := part.MarshalJSON()
	if err != nil {
		return nil, nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(form, &fields); err != nil {
		return nil, nil, err
	}
	step = fields["messages"]
	delete(fields, "messages")
	head, err = json.Marshal(fields)
	return head, step, err
}

// withMessages is the JSON form of a state from head, its form without
// messages, and its messages.
func withMessages(head []byte, msgs []json.RawMessage) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(head, &fields); err != nil {
		return nil, err
	}
	b := []byte("[")
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	fields["messages"] = append(b, ']')
	return json.Marshal(fields)
}

// putSegment writes step, the JSON array of n messages, as a new segment
// of the session id. Its key is unique to the save (revision rev, token
// writer), so that no other save's item can point at it.
func (s *Store) putSegment(ctx context.Context, id string, rev int64, writer string, step []byte, n int) (segment, error) {
	seg := segment{id: fmt.Sprintf("%d-%s", rev, writer), messages: n}
	b, enc := s.encode(step)
	item := s.segmentKey(id, seg.id)
	item["encoding"] = str(enc)
	if s.opts.TTL > 0 {
		// Twice the session's: it outlives the items pointing at it,
		// which kept replaces before it expires.
		seg.expires = s.now().Add(2 * s.opts.TTL).Unix()
		item[s.opts.TTLAttribute] = number(seg.expires)
	}
	object, err := s.place(ctx, id, rev, item, "messages", enc, b)
	if err != nil {
		return segment{}, err
	}
	if object != "" {
		seg.bucket, seg.object = s.opts.Bucket, object
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		if object != "" {
			s.remove(ctx, seg.bucket, object)
		}
		return segment{}, fmt.Errorf("dynamostore: save session %q: segment: %w", id, err)
	}
	return seg, nil
}

// readSegments reads the messages of the segments segs of the session id.
// A segment gone, as a newer save replaced it, is errPartGone.
func (s *Store) readSegments(ctx context.Context, id string, segs []segment) ([]json.RawMessage, error) {
	items, err := s.getSegments(ctx, id, segs)
	if err != nil {
		return nil, err
	}
	var msgs []json.RawMessage
	for _, seg := range segs {
		item, ok := items[s.keyOf(s.segmentKey(id, seg.id))]
		if !ok {
			return nil, errPartGone
		}
		b, err := s.payload(ctx, item, "messages")
		if err != nil {
			return nil, fmt.Errorf("segment %s: %w", seg.id, err)
		}
		var part []json.RawMessage
		if err := json.Unmarshal(b, &part); err != nil {
			return nil, fmt.Errorf("segment %s: %w", seg.id, err)
		}
		if len(part) != seg.messages {
			return nil, fmt.Errorf("segment %s: %d messages, the item says %d", seg.id, len(part), seg.messages)
		}
		msgs = append(msgs, part...)
	}
	return msgs, nil
}

// getSegments reads the items of segs, by keyOf, with BatchGetItem. It
// asks again for the keys DynamoDB left unprocessed, backing off.
func (s *Store) getSegments(ctx context.Context, id string, segs []segment) (map[string]map[string]types.AttributeValue, error) {
	items := make(map[string]map[string]types.AttributeValue, len(segs))
	if len(segs) == 0 {
		return items, nil
	}
	keys := make([]map[string]types.AttributeValue, len(segs))
	for i, seg := range segs {
		keys[i] = s.segmentKey(id, seg.id)
	}
	req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for try := 0; len(req) > 0; try++ {
		if try > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(min(try, 10)) * 50 * time.Millisecond):
			}
		}
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, err
		}
		for _, item := range out.Responses[s.table] {
			items[s.keyOf(item)] = item
		}
		req = out.UnprocessedKeys
	}
	return items, nil
}

// dropSegments deletes the segments segs of the session id, and their
// objects, once no item points at them. A failure leaves them: see the
// package doc.
func (s *Store) dropSegments(ctx context.Context, id string, segs []segment) {
	for chunk := range slices.Chunk(segs, 25) { // BatchWriteItem's limit
		reqs := make([]types.WriteRequest, len(chunk))
		for i, seg := range chunk {
			reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: s.segmentKey(id, seg.id)}}
		}
		s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: reqs}})
		for _, seg := range chunk {
			if seg.object != "" {
				s.remove(ctx, seg.bucket, seg.object)
			}
		}
	}
}

// replaced is what of the item old the save of segs no longer points at.
func replaced(old map[string]types.AttributeValue, segs []segment) []segment {
	v, ok := old["segments"]
	if !ok {
		return nil
	}
	before, err := segmentsOf(v)
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(before, func(b segment) bool {
		return slices.ContainsFunc(segs, func(seg segment) bool { return seg.id == b.id })
	})
}

var errPartGone = errors.New("a part of the state is gone")
