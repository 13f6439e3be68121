package dynamostore_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/filestore"
)

// BenchmarkSave is the cost of saving one step (a message of 1 KB more) of
// a conversation whose history is size bytes. It saves to a
// filestore.Store, which appends the step. It saves to a dynamostore Store
// on dynalite too, which writes the whole item. Past 400 KB, that state
// goes to gofakes3 first.
func BenchmarkSave(b *testing.B) {
	ctx := context.Background()
	for _, size := range []int{10 << 10, 100 << 10, 1 << 20} {
		for _, kind := range []string{"file", "dynamodb"} {
			b.Run(fmt.Sprintf("history=%dKB/store=%s", size>>10, kind), func(b *testing.B) {
				var store converse.Store = filestore.Store{Dir: b.TempDir()}
				if kind == "dynamodb" {
					store, _ = newStore(b, http.DefaultTransport)
				}
				words := []string{"go"}
				for range size / (10 << 10) {
					words = append(words, strings.Repeat("h", 10<<10))
				}
				if len(words)%2 == 1 {
					words = append(words, "ok")
				}
				// Every 10 steps, a new session of the same history, so that
				// it stays near size (a step adds 512 bytes).
				var st *converse.State
				id, steps := "", 0
				for b.Loop() {
					if steps%10 == 0 {
						b.StopTimer()
						st, id = textState(words...), fmt.Sprint("s", steps)
						if err := store.Save(ctx, id, st); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					steps++
					st.Messages = append(st.Messages, textState("next", strings.Repeat("s", 500)).Messages...)
					if err := store.Save(ctx, id, st); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
