package converse

import (
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
