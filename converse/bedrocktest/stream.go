package bedrocktest

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/tooluse/bedrock/converse/internal/wire"
	"github.com/tooluse/bedrock/converse/recording"
)

// defaultChunk is the delta size when Reply.Chunk is 0: small, so that a
// client under test has to assemble most blocks from several pieces.
const defaultChunk = 4

// streamEvents returns the events of a ConverseStream reply.
func streamEvents(reply *Reply) ([]recording.Event, error) {
	if reply.Events != nil {
		return reply.Events, nil
	}
	out := reply.Output
	if out == nil && reply.Raw != nil {
		var err error
		if out, err = wire.DecodeConverseOutput(reply.Raw); err != nil {
			return nil, err
		}
	}
	if out == nil {
		return nil, setupErrorf("Reply to ConverseStream has no Output, Raw or Events")
	}
	chunk := reply.Chunk
	if chunk == 0 {
		chunk = defaultChunk
	}
	evs, err := wire.StreamEvents(out, chunk)
	if err != nil {
		return nil, err
	}
	events := make([]recording.Event, len(evs))
	for i, ev := range evs {
		events[i] = recording.Event{Type: ev.Type, Payload: json.RawMessage(ev.Payload)}
	}
	return events, nil
}

func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, reply *Reply) {
	events, err := streamEvents(reply)
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			e = setupErrorf("%v", err)
		}
		writeError(w, e)
		return
	}
	if reply.DropMessageStop {
		kept := make([]recording.Event, 0, len(events))
		for _, ev := range events {
			if ev.Type != "messageStop" && ev.Type != "metadata" {
				kept = append(kept, ev)
			}
		}
		events = kept
	}

	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	w.Header().Set("Content-Type", wire.ContentTypeEventStream)
	w.WriteHeader(http.StatusOK)
	flush()

	// An exception or a cut past the last event comes right after it.
	exceptionAt, cutAt := -1, -1
	if reply.Exception != nil {
		exceptionAt = min(max(reply.ExceptionAfter, 0), len(events))
	}
	if reply.CutAfter > 0 {
		cutAt = min(reply.CutAfter, len(events))
	}
	ctx := r.Context()
	if !pause(ctx, reply.Latency) {
		return
	}
	for i := 0; i <= len(events); i++ {
		if i == len(events) && i != exceptionAt && i != cutAt {
			return
		}
		if i > 0 && !pause(ctx, reply.Interval) {
			return
		}
		if reply.StallAfter > 0 && i == reply.StallAfter {
			<-ctx.Done()
			return
		}
		switch i {
		case exceptionAt:
			_ = wire.WriteExceptionFrame(w, reply.Exception.Type, reply.Exception.Message)
			flush()
			return
		case cutAt:
			if i < len(events) {
				frame, _ := wire.EncodeEventFrame(events[i].Type, events[i].Payload)
				_, _ = w.Write(frame[:len(frame)/2])
				flush()
			}
			// Drop the connection without ending the chunked body, as
			// when a connection breaks mid-stream.
			panic(http.ErrAbortHandler)
		}
		if err := wire.WriteEventFrame(w, events[i].Type, events[i].Payload); err != nil {
			return
		}
		flush()
	}
}

// pause waits d, or until ctx is done; it reports whether to go on.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
