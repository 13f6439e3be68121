package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/schemas"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// DecodeKnownMessages is DecodeMessages for messages read back from
// storage. A content block of a kind the SDK does not know is an error
// naming it. The SDK's decoder would read it as a copy of the block before
// it, or as nil. first is the position of the array's first message
// in the history, for errors.
func DecodeKnownMessages(raw []byte, first int) ([]types.Message, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, errors.New("messages: not a JSON array")
	}
	var msgs []struct {
		Content []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	for i, m := range msgs {
		for j, b := range m.Content {
			if err := knownBlock(b); err != nil {
				return nil, fmt.Errorf("message %d, block %d: %w", first+i, j, err)
			}
		}
	}
	return DecodeMessages(raw)
}

// knownBlock rejects a content block, or a toolResult content block within
// it, of a kind the SDK does not know. The SDK's decoder would read it as
// a copy of the block before it, or as nil, which is dropped when sent.
func knownBlock(raw json.RawMessage) error {
	var block map[string]json.RawMessage
	if err := json.Unmarshal(raw, &block); err != nil {
		return err
	}
	for kind, v := range block {
		if schemas.ContentBlock.Member(kind) == nil {
			return fmt.Errorf("%q is not a content block this package knows", kind)
		}
		if kind != "toolResult" {
			continue
		}
		var r struct{ Content []map[string]json.RawMessage }
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		for k, c := range r.Content {
			for kind := range c {
				if schemas.ToolResultContentBlock.Member(kind) == nil {
					return fmt.Errorf("toolResult content %d: %q is not a content block this package knows", k, kind)
				}
			}
		}
	}
	return nil
}
