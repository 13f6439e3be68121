package converse_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestRequestsWithoutHooks: with no middleware, turn hook or fallback set, the
// request bodies of a five-turn tool loop with prompt caching, streamed and
// not, are those of testdata/nohooks.golden. That file was written before the
// hooks existed (go test -run TestRequestsWithoutHooks -update writes it
// anew).
func TestRequestsWithoutHooks(t *testing.T) {
	var sb strings.Builder
	for _, stream := range []bool{false, true} {
		srv, client := serve(t, toolLoop(5), func(o *bedrocktest.Options) { o.Accounting = true })
		c := converse.New(client, "us.anthropic.claude-3-7-sonnet-20250219-v1:0", lookupTools(t, 6), func(o *converse.Options) {
			o.Request.System = systemPrompt(1500)
			o.Cache = &converse.CachePolicy{}
			o.Stream = streamIf(stream)
		})
		_, err := c.Send(context.Background(), "Find the records about the harbour.")
		require.NoError(t, err)
		for _, req := range srv.Requests() {
			sb.Write(req.Body)
			sb.WriteString("\n")
		}
	}
	golden(t, filepath.Join("testdata", "nohooks.golden"), sb.String())
}
