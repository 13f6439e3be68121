// Package wirejson reads and writes the SDK's Converse types in Bedrock's
// wire JSON. That JSON has the field names and shapes of the API
// reference, such as a Converse request's "messages" field. The SDK's Go
// types have others, which encoding/json cannot read back (a content block
// is an interface). Every value goes through the SDK's own serializers, so what
// it writes is what Bedrock reads.
//
// It is the form a message or a model call takes outside the process: a
// saved history, a request handed to a worker, a Temporal payload.
package wirejson

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/wire"
)

// MarshalMessages returns msgs, such as converse.Result.History, as the
// array a Converse request carries in its "messages" field.
func MarshalMessages(msgs []types.Message) ([]byte, error) {
	return wrap(wire.EncodeMessages(msgs))
}

// UnmarshalMessages reads what MarshalMessages writes. A content block of
// a kind the SDK does not know is an error naming it.
func UnmarshalMessages(data []byte) ([]types.Message, error) {
	return wrap(wire.DecodeKnownMessages(data, 0))
}

// MarshalRequest returns the body of the Converse request in: all of it but
// the model ID, which travels in the URL's path.
func MarshalRequest(in *bedrockruntime.ConverseInput) ([]byte, error) {
	return wrap(wire.EncodeConverseInput(in))
}

// UnmarshalRequest reads the body of a Converse request, such as
// MarshalRequest writes; its ModelId is nil.
func UnmarshalRequest(data []byte) (*bedrockruntime.ConverseInput, error) {
	return wrap(wire.DecodeConverseInput(data))
}

// MarshalResponse returns the body of the Converse response out.
func MarshalResponse(out *bedrockruntime.ConverseOutput) ([]byte, error) {
	return wrap(wire.EncodeConverseOutput(out))
}

// UnmarshalResponse reads the body of a Converse response, such as
// MarshalResponse writes.
func UnmarshalResponse(data []byte) (*bedrockruntime.ConverseOutput, error) {
	return wrap(wire.DecodeConverseOutput(data))
}

// wrap prefixes an error with the package's name.
func wrap[T any](v T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, fmt.Errorf("wirejson: %w", err)
	}
	return v, nil
}
