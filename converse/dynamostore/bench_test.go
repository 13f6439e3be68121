package dynamostore_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/filestore"
)

// BenchmarkSave is the cost of saving one step of a session whose history
// is about history bytes. A step is a user message and a reply of step
// bytes in all. A filestore.Store appends the step's record and syncs once.
// A dynamostore Store on dynalite writes the whole item conditionally; past
// 400 KB the state goes to gofakes3 first. Each op saves the history as a
// new session, untimed, then the step, timed. For the file,
// B-written/save is what the step added to the session's file.
func BenchmarkSave(b *testing.B) {
	for _, history := range []int{10 << 10, 1 << 20} {
		for _, step := range []int{1 << 10, 64 << 10} {
			for _, kind := range []string{"file", "dynamodb"} {
				b.Run(fmt.Sprintf("history=%dKB/step=%dKB/store=%s", history>>10, step>>10, kind), func(b *testing.B) {
					benchSave(b, kind, history, step)
				})
			}
		}
	}
}

func benchSave(b *testing.B, kind string, history, step int) {
	ctx := context.Background()
	dir := b.TempDir()
	var store converse.Store = filestore.Store{Dir: dir}
	if kind == "dynamodb" {
		store, _ = newStore(b, http.DefaultTransport)
	}
	words := []string{"go"}
	for range history / (10 << 10) {
		words = append(words, strings.Repeat("h", 10<<10))
	}
	if len(words)%2 == 1 {
		words = append(words, "ok")
	}
	next := textState("next", strings.Repeat("s", step-len("next"))).Messages
	var written int64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		st, id := textState(words...), fmt.Sprint("s", i)
		if err := store.Save(ctx, id, st); err != nil {
			b.Fatal(err)
		}
		before := benchFileSize(dir, id)
		st.Messages = append(st.Messages, next...)
		b.StartTimer()
		if err := store.Save(ctx, id, st); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		written += benchFileSize(dir, id) - before
		b.StartTimer()
	}
	if kind == "file" {
		b.ReportMetric(float64(written)/float64(b.N), "B-written/save")
	}
}

// benchFileSize is the size of the file id in dir, or 0 if there is none.
func benchFileSize(dir, id string) int64 {
	fi, err := os.Stat(filepath.Join(dir, id))
	if err != nil {
		return 0
	}
	return fi.Size()
}
