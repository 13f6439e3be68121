package wire

import (
	"errors"
	"io"

	"github.com/aws/smithy-go/eventstream"
)

// The inverse of ReadFrame's writers, which only the tests need.

// Frame is one decoded event stream frame.
type Frame struct {
	MessageType string // "event", "exception" or "error"
	Type        string // :event-type, :exception-type or :error-code
	Payload     []byte
}

// ReadFrame reads the next frame from an event stream. At the clean end of
// the stream it returns io.EOF; a frame cut short is io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader) (Frame, error) {
	msg, err := eventstream.NewDecoder().Decode(r, nil)
	if err != nil {
		if errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return Frame{}, io.EOF
		}
		return Frame{}, err
	}
	f := Frame{Payload: msg.Payload}
	if v := msg.Headers.Get(eventstream.MessageTypeHeader); v != nil {
		f.MessageType = v.String()
	}
	for _, name := range []string{eventstream.EventTypeHeader, eventstream.ExceptionTypeHeader, eventstream.ErrorCodeHeader} {
		if v := msg.Headers.Get(name); v != nil {
			f.Type = v.String()
			break
		}
	}
	return f, nil
}
