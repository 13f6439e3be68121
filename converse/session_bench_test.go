package converse_test

import (
	"context"
	"os"
	"testing"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
)

// BenchmarkSession is a 200-round conversation with 20 KB of tool input and
// output a round against bedrocktest. It runs without a store and with a
// filestore.Store saving every step. The session's cost is its appends and one
// fsync a step, not the history rewritten at each.
func BenchmarkSession(b *testing.B) {
	const rounds, size = 200, 20_000
	reg := echoTool(b, nil)
	for _, store := range []string{"none", "file"} {
		b.Run("store="+store, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				srv := bedrocktest.NewServer(echoRounds(rounds, size))
				dir, err := os.MkdirTemp(b.TempDir(), "session")
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				c := converse.New(srv.Client(), benchModelID, reg, func(o *converse.Options) {
					o.MaxTurns = rounds + 1
					if store == "file" {
						o.Session = &converse.Session{Store: filestore.Store{Dir: dir}, ID: "s"}
					}
				})
				if _, err := c.Send(context.Background(), "go"); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				srv.Close()
				b.StartTimer()
			}
		})
	}
}
