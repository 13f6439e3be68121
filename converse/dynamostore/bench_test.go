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
// A dynamostore Store on dynalite writes a segment of the step, then the
// session's item conditionally. Each op saves the history as a new
// session, untimed, then the step, timed. B-written/save is what the step
// added to the session's file, or the bodies of the DynamoDB write
// requests it sent.
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
	var counter writeCounter
	if kind == "dynamodb" {
		_, f := newStore(b, http.DefaultTransport)
		store = f.through(&counter, 0)
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
		before := benchFileSize(dir, id) + counter.bytes.Load()
		st.Messages = append(st.Messages, next...)
		b.StartTimer()
		if err := store.Save(ctx, id, st); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		written += benchFileSize(dir, id) + counter.bytes.Load() - before
		b.StartTimer()
	}
	b.ReportMetric(float64(written)/float64(b.N), "B-written/save")
}

// benchFileSize is the size of the file id in dir, or 0 if there is none.
func benchFileSize(dir, id string) int64 {
	fi, err := os.Stat(filepath.Join(dir, id))
	if err != nil {
		return 0
	}
	return fi.Size()
}
