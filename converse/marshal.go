package converse

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/wire"
)

// MarshalMessages returns msgs, such as Result.History, in Bedrock's wire
// JSON: the array a Converse request carries in its "messages" field, with
// the field names and shapes of the API reference rather than those of the
// SDK's Go types.
func MarshalMessages(msgs []types.Message) ([]byte, error) {
	return wire.EncodeMessages(msgs)
}

// UnmarshalMessages reads what MarshalMessages writes: an array of messages
// in Bedrock's wire JSON, such as a Converse request's "messages" field. A
// content block of a kind the SDK does not know is an error naming it.
func UnmarshalMessages(data []byte) ([]types.Message, error) {
	msgs, err := decodeMessages(data, 0)
	if err != nil {
		return nil, fmt.Errorf("converse: %w", err)
	}
	return msgs, nil
}
