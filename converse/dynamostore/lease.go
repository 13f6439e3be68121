package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tooluse/bedrock/converse"
)

// DefaultLease is how long a Hold holds a session unrenewed if
// Options.Lease is not set: how long a crashed run keeps others out.
const DefaultLease = 30 * time.Second

// Hold takes the session id for a Send, Resume or Stop of a conversation
// whose state is st, until release is called. It writes a lease (holder
// and heldUntil) to the item if no other lease is live and the item is at
// st.Revision. It renews the lease every third of Options.Lease. If
// another holds the session, Hold fails at once with an error matching
// converse.ErrSessionLocked, naming the holder and when its lease ends. If
// the session is not at st.Revision, the error matches
// converse.ErrSessionChanged.
func (s *Store) Hold(ctx context.Context, id string, st *converse.State) (release func(), err error) {
	if id == "" {
		return nil, errors.New("dynamostore: hold session: no session id")
	}
	base, err := s.base(ctx, id, st)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: hold session %q: %w", id, err)
	}
	host, _ := os.Hostname()
	holder := fmt.Sprintf("%s/%d/%s", host, os.Getpid(), token())
	in := &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: s.key(id),
		UpdateExpression:          aws.String("SET #h = :h, #hu = :until"),
		ExpressionAttributeNames:  map[string]string{"#h": "holder", "#hu": "heldUntil"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": &types.AttributeValueMemberS{Value: holder}, ":until": s.leaseEnd()},
	}
	if s.opts.TTL > 0 {
		// A session that no save follows expires as a saved one would.
		in.UpdateExpression = aws.String("SET #h = :h, #hu = :until, #t = if_not_exists(#t, :expires)")
		in.ExpressionAttributeValues[":expires"] = number(s.now().Add(s.opts.TTL).Unix())
	}
	in.ConditionExpression = aws.String(s.leaseFree(in.ExpressionAttributeValues) + " AND " +
		s.onRevision(st, base, in.ExpressionAttributeNames, in.ExpressionAttributeValues))
	_, err = s.db.UpdateItem(ctx, in)
	if failed := (*types.ConditionalCheckFailedException)(nil); errors.As(err, &failed) {
		return nil, s.conflict(ctx, id, st.Revision, "")
	}
	if err != nil {
		return nil, fmt.Errorf("dynamostore: hold session %q: %w", id, err)
	}
	s.mu.Lock()
	if s.holders == nil {
		s.holders = make(map[string]string)
	}
	s.holders[id] = holder
	s.mu.Unlock()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(s.lease() / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if !s.renew(id, holder) {
					return
				}
			}
		}
	}()
	return sync.OnceFunc(func() {
		close(stop)
		<-stopped
		s.mu.Lock()
		if s.holders[id] == holder {
			delete(s.holders, id)
		}
		s.mu.Unlock()
		s.unlease(id, holder)
	}), nil
}

func (s *Store) lease() time.Duration {
	if s.opts.Lease > 0 {
		return s.opts.Lease
	}
	return DefaultLease
}

func (s *Store) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

// leaseEnd is heldUntil of a lease taken or renewed now: Unix milliseconds.
func (s *Store) leaseEnd() types.AttributeValue {
	return number(s.now().Add(s.lease()).UnixMilli())
}

// holder is this Store's holder of the session id, or "".
func (s *Store) holder(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holders[id]
}

// leaseFree is the condition that no lease of the item is live, with the
// names #h and #hu; it adds :now to values.
func (s *Store) leaseFree(values map[string]types.AttributeValue) string {
	values[":now"] = number(s.now().UnixMilli())
	return "(attribute_not_exists(#h) OR #hu <= :now)"
}

// renew extends the lease of holder on the session id, and reports whether
// it is still the holder's: a failed request is tried again at the next
// tick.
func (s *Store) renew(id, holder string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), s.lease()/3)
	defer cancel()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: s.key(id),
		UpdateExpression:          aws.String("SET #hu = :until"),
		ConditionExpression:       aws.String("#h = :h"),
		ExpressionAttributeNames:  map[string]string{"#h": "holder", "#hu": "heldUntil"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": &types.AttributeValueMemberS{Value: holder}, ":until": s.leaseEnd()},
	})
	var failed *types.ConditionalCheckFailedException
	return !errors.As(err, &failed)
}

// unlease removes the lease of holder from the session id, and the item if
// it holds nothing else (no save followed the Hold). A failure leaves the
// lease to expire.
func (s *Store) unlease(id, holder string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: s.key(id),
		UpdateExpression:          aws.String("REMOVE #h, #hu"),
		ConditionExpression:       aws.String("#h = :h"),
		ExpressionAttributeNames:  map[string]string{"#h": "holder", "#hu": "heldUntil"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": &types.AttributeValueMemberS{Value: holder}},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return
	}
	if _, saved := out.Attributes["revision"]; !saved {
		s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: s.key(id),
			ConditionExpression:      aws.String("attribute_not_exists(#r) AND attribute_not_exists(#h)"),
			ExpressionAttributeNames: map[string]string{"#r": "revision", "#h": "holder"}})
	}
}

// conflict is the error of a write of the session id, on top of revision
// rev, whose condition failed: converse.ErrSessionLocked if another holds
// the session, converse.ErrSessionChanged otherwise. me is the holder
// this Store wrote the item as, if it held it.
func (s *Store) conflict(ctx context.Context, id string, rev int64, me string) error {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: s.key(id), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("#h, #hu"), ExpressionAttributeNames: map[string]string{"#h": "holder", "#hu": "heldUntil"}})
	var other string
	if err == nil && out.Item != nil {
		h, _ := out.Item["holder"].(*types.AttributeValueMemberS)
		until, err := numberOf(out.Item, "heldUntil")
		if h != nil && err == nil && h.Value != me && until > s.now().UnixMilli() {
			if me == "" {
				return fmt.Errorf("dynamostore: %w: %q is held by %s until %s", converse.ErrSessionLocked, id, h.Value,
					time.UnixMilli(until).UTC().Format(time.RFC3339))
			}
			other = h.Value
		}
	}
	if other != "" {
		return fmt.Errorf("dynamostore: %w: %q was taken over by %s: this run's lease lapsed, unrenewed for %s; Load and Restore it again", converse.ErrSessionChanged, id, other, s.lease())
	}
	return fmt.Errorf("dynamostore: %w: %q was saved by another conversation since this one last saved or was restored from it (revision %d); Load and Restore it again", converse.ErrSessionChanged, id, rev)
}
