package bedrocktest

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/tooluse/bedrock/converse/internal/wire"
	"github.com/tooluse/bedrock/converse/recording"
)

// Replay returns a Handler that answers the calls of a test with the
// exchanges of rec, as a recording.Replayer does in process. The first call
// gets the first exchange, and so on. Each request is checked against the
// recorded one unless recording.ReplayOptions.Lenient is set. A recorded
// Converse response is served byte for byte. A recorded stream is served
// event by event, and its exception, if it ended with one, as an exception
// message. A recorded error is served as the same *Error: same status, same
// type, same message. A call that cannot be answered from the recording gets
// a 400 ValidationException whose message starts "recording: replay:" and
// says why (see recording.Replayer). ReplayT also fails the test if exchanges
// are left unused.
//
// The server writes an error or an exception as {"message": ...}, so Replay
// serves less than a recording.Replayer does. An error's or an exception's
// other members are left out (ModelStreamErrorException's
// originalStatusCode, say). An error body that was not JSON becomes its
// message. A stream that ended in an error message
// (recording.Event.MessageType "error") ends in an exception of that code
// instead, which the SDK reports as the same *smithy.GenericAPIError. A
// stream recorded with a DecodeError, which the server cannot send, is
// answered with the ValidationException of a call that cannot be answered
// from the recording. Use a recording.Replayer (Replayer.Client) where those
// matter.
//
// Replay works on a copy of rec, and the Handler is safe for concurrent use,
// though concurrent calls take exchanges in the order they arrive.
func Replay(rec *recording.Recording, optFns ...func(*recording.ReplayOptions)) Handler {
	return replayer{recording.NewReplayer(rec, optFns...)}
}

// ReplayT is Replay for a test. When the test ends, it fails t if some
// recorded exchanges were never asked for, naming how many and the first
// of them. A test that makes fewer calls than the recording has is as
// wrong as one that makes more.
func ReplayT(t testing.TB, rec *recording.Recording, optFns ...func(*recording.ReplayOptions)) Handler {
	t.Helper()
	p := recording.NewReplayer(rec, optFns...)
	t.Cleanup(func() {
		if err := p.Unused(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return replayer{p}
}

type replayer struct{ p *recording.Replayer }

func (r replayer) ServeConverse(_ context.Context, req *Request) (*Reply, error) {
	x, err := r.p.Next(req.Operation, aws.ToString(req.ModelId), req.Body)
	if err != nil {
		return nil, Validation(err.Error())
	}
	if x.Status >= 300 {
		return nil, &Error{Status: x.Status, Type: x.ErrorType, Message: wire.ErrorMessage(x.Response)}
	}
	if x.Operation == recording.OpConverse {
		return &Reply{Raw: wire.ServedBody(x.Response)}, nil
	}
	if x.DecodeError != "" {
		return nil, Validation(fmt.Sprintf("recording: replay: the recorded stream broke (decodeError %q), which bedrocktest cannot send: replay it with a recording.Replayer", x.DecodeError))
	}
	reply := &Reply{Events: []recording.Event{}} // non-nil: a stream that is only an exception
	for _, ev := range x.Events {
		if wire.RecordedMessageType(ev.MessageType, ev.Type) != wire.MessageTypeEvent { // the recording checked it is the last one
			reply.Exception = &Exception{Type: ev.Type, Message: wire.ErrorMessage(ev.Payload)}
			reply.ExceptionAfter = len(reply.Events)
			break
		}
		reply.Events = append(reply.Events, recording.Event{Type: ev.Type, Payload: wire.ServedPayload(ev.Payload)})
	}
	return reply, nil
}
