package bedrocktest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inProcessInput is a one-message request to Claude.
func inProcessInput() *bedrockruntime.ConverseInput {
	return &bedrockruntime.ConverseInput{
		ModelId:  aws.String("anthropic.claude-3-haiku-20240307-v1:0"),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}}},
	}
}

// streamIn is inProcessInput as a ConverseStream request.
func streamIn() *bedrockruntime.ConverseStreamInput {
	in := inProcessInput()
	return &bedrockruntime.ConverseStreamInput{ModelId: in.ModelId, Messages: in.Messages}
}

// TestInProcessLatency serves a Converse and a stream whose model takes a
// minute to answer, in virtual time: the answer comes at exactly a minute.
func TestInProcessLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reply := Text("Hello there.")
		reply.Latency = time.Minute
		srv := NewInProcessServer(Script(reply, reply))
		defer srv.Close()
		client := srv.Client()

		start := time.Now()
		out, err := client.Converse(context.Background(), inProcessInput())
		require.NoError(t, err)
		assert.Equal(t, types.StopReasonEndTurn, out.StopReason)
		assert.Equal(t, time.Minute, time.Since(start), "the answer comes after the latency")

		start = time.Now()
		s, err := client.ConverseStream(context.Background(), streamIn())
		require.NoError(t, err)
		assert.Zero(t, time.Since(start), "the stream's 200 comes at once")
		stream := s.GetStream()
		defer stream.Close()
		<-stream.Events()
		assert.Equal(t, time.Minute, time.Since(start), "its first event after the latency")
		for range stream.Events() {
		}
		require.NoError(t, stream.Err())
	})
}

// TestInProcessStallAndCut sees a stream stall after two events until the
// client's deadline, and one cut after two events end early, as on
// loopback.
func TestInProcessStallAndCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stall, cut := Text("Hello there, all of you."), Text("Hello there, all of you.")
		stall.StallAfter, cut.CutAfter = 2, 2
		srv := NewInProcessServer(Script(stall, cut))
		defer srv.Close()
		client := srv.Client()

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		out, err := client.ConverseStream(ctx, streamIn())
		require.NoError(t, err)
		n := 0
		for range out.GetStream().Events() {
			n++
		}
		out.GetStream().Close()
		assert.Equal(t, 2, n)
		assert.Equal(t, 10*time.Second, time.Since(start), "the stall lasts until the client's deadline")

		out, err = client.ConverseStream(context.Background(), streamIn())
		require.NoError(t, err)
		n = 0
		for range out.GetStream().Events() {
			n++
		}
		out.GetStream().Close()
		assert.Equal(t, 2, n, "the events before the cut arrive, no more")
	})
}
