package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go/eventstream"
)

// The inverses of what the package exports, which only its tests need.

// EncodeConverseInput encodes the body of a Converse request as the SDK
// sends it (without the model ID, which travels in the URL path).
func EncodeConverseInput(in *bedrockruntime.ConverseInput) ([]byte, error) {
	cp := *in
	cp.ModelId = nil
	b, err := encode(schemas.ConverseRequest, &cp)
	if err != nil {
		return nil, fmt.Errorf("wire: encode converse request: %w", err)
	}
	return b, nil
}

// DecodeMessages decodes a JSON array in the form of a request's "messages"
// field.
func DecodeMessages(b []byte) ([]types.Message, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '[' || !json.Valid(b) {
		return nil, fmt.Errorf("wire: decode messages: not a JSON array")
	}
	body := make([]byte, 0, len(b)+14)
	body = append(body, `{"messages":`...)
	body = append(body, b...)
	body = append(body, '}')
	in := &bedrockruntime.ConverseInput{}
	if err := decode(schemas.ConverseRequest, body, (*converseRequest)(in)); err != nil {
		return nil, fmt.Errorf("wire: decode messages: %w", err)
	}
	if in.Messages == nil {
		in.Messages = []types.Message{}
	}
	return in.Messages, nil
}

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
