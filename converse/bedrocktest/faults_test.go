package bedrocktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithy "github.com/aws/smithy-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStreamCutAfter(t *testing.T) {
	reply := Text("a long answer that will not arrive whole")
	reply.CutAfter = 3
	s := streamOnce(t, reply)
	// The client sees the 3 whole events, then the Events channel closes.
	// The SDK's event stream decoder takes the unexpected EOF in the cut
	// frame for the end of the stream, so Err reports nothing: a client
	// must notice the missing messageStop itself.
	assert.Len(t, s.events, 3)
	assert.Equal(t, types.StopReason(""), s.stop)
	assert.Equal(t, nil, s.err)
}

func TestStreamCutAfterLastEvent(t *testing.T) {
	reply := Text("hi")
	reply.CutAfter = 100
	s := streamOnce(t, reply)
	assert.Equal(t, types.StopReasonEndTurn, s.stop)
	assert.Equal(t, nil, s.err)
}

func TestStreamDropMessageStop(t *testing.T) {
	reply := Text("unfinished")
	reply.DropMessageStop = true
	s := streamOnce(t, reply)
	require.NoError(t, s.err)
	assert.Equal(t, "unfinished", s.texts[0])
	assert.Equal(t, types.StopReason(""), s.stop)
	assert.True(t, s.usage == nil, "no metadata")
	_, last := s.events[len(s.events)-1].(*types.ConverseStreamOutputMemberContentBlockStop)
	assert.True(t, last, "the stream ends after the last block")
}

func TestStreamExceptions(t *testing.T) {
	tests := []struct {
		typ string
		as  func(error) bool
	}{
		{"modelStreamErrorException", func(err error) bool { var e *types.ModelStreamErrorException; return errors.As(err, &e) }},
		{"throttlingException", func(err error) bool { var e *types.ThrottlingException; return errors.As(err, &e) }},
		{"internalServerException", func(err error) bool { var e *types.InternalServerException; return errors.As(err, &e) }},
		{"serviceUnavailableException", func(err error) bool { var e *types.ServiceUnavailableException; return errors.As(err, &e) }},
		{"validationException", func(err error) bool { var e *types.ValidationException; return errors.As(err, &e) }},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			reply := Text("partial answer")
			reply.Exception = &Exception{Type: tt.typ, Message: "stream broke"}
			reply.ExceptionAfter = 2
			srv := NewServer(Script(reply))
			defer srv.Close()
			s := converseStream(t, srv.Client(), streamInput(userText("hi")))
			assert.Len(t, s.events, 2)
			require.Error(t, s.err)
			assert.True(t, tt.as(s.err), "typed error", s.err)
			var api smithy.APIError
			require.ErrorAs(t, s.err, &api)
			assert.Equal(t, "stream broke", api.ErrorMessage())
		})
	}
}

func TestStreamUnmodeledException(t *testing.T) {
	reply := Text("x")
	reply.Exception = &Exception{Type: "somethingNewException", Message: "new"}
	s := streamOnce(t, reply)
	assert.Len(t, s.events, 0)
	var api smithy.APIError
	require.ErrorAs(t, s.err, &api)
	assert.Equal(t, "somethingNewException", api.ErrorCode())
	assert.Equal(t, "new", api.ErrorMessage())
}

func TestStreamCancel(t *testing.T) {
	reply := Text("a slow answer, one piece at a time, for a long while")
	reply.StallAfter = 2 // only cancellation ends it
	srv := NewServer(Script(reply))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := srv.Client().ConverseStream(ctx, streamInput(userText("hi")))
	require.NoError(t, err)
	stream := out.GetStream()
	defer stream.Close()
	<-stream.Events() // messageStart
	cancel()
	// The events channel must close once the call is cancelled, not when the
	// stream would have ended; the timer is only a failsafe against a hang.
	drained := make(chan struct{})
	go func() {
		for range stream.Events() {
		}
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream did not close after cancel")
	}
	assert.True(t, stream.Err() == nil || errors.Is(stream.Err(), context.Canceled), "err after cancel", stream.Err())
}
