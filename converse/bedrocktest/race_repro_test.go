//go:build racerepro

package bedrocktest

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/smithy-go/transport/http/protocol/restjson1"
	"github.com/stretchr/testify/assert"
)

// TestConcurrentStreamsOneClient reproduces the data race that -race
// reports inside smithy-go's event-stream decoder when streams run at once
// on one client, and shows the workaround (see the package doc). Run it with
//
//	go test -race -tags racerepro -run TestConcurrentStreamsOneClient ./converse/bedrocktest/
//
// The "shared" subtest is expected to fail with "race detected".
func TestConcurrentStreamsOneClient(t *testing.T) {
	for name, optFns := range map[string][]func(*bedrockruntime.Options){
		"shared":       nil,
		"own protocol": {ownProtocol},
	} {
		t.Run(name, func(t *testing.T) {
			const streams, each = 8, 10
			replies := make([]*Reply, streams*each)
			for i := range replies {
				replies[i] = Text("a reply long enough to come in several deltas")
			}
			srv := NewServer(Script(replies...))
			defer srv.Close()
			client := srv.Client()
			var wg sync.WaitGroup
			for range streams {
				wg.Go(func() {
					for range each {
						out, err := client.ConverseStream(context.Background(), streamInput(userText("hi")), optFns...)
						if !assert.NoError(t, err) {
							return
						}
						for range out.GetStream().Events() {
						}
						assert.NoError(t, out.GetStream().Close())
					}
				})
			}
			wg.Wait()
		})
	}
}

// ownProtocol gives a call a protocol, and so an event-stream codec, of its
// own, as the package doc suggests.
func ownProtocol(o *bedrockruntime.Options) {
	o.Protocol = restjson1.New(schemas.AmazonBedrockFrontendService)
}
