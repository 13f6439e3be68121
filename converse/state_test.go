package converse_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestRestoreRejectsBadBlocks: a history Bedrock would reject at every later
// call (a toolResult answering no toolUse) fails Restore. One that would lose
// a block fails to load, naming the message and the block. Such a block is of
// a kind this package does not know, which the SDK's decoder reads as a copy
// of the block before. A server tool's result in its own message is kept.
func TestRestoreRejectsBadBlocks(t *testing.T) {
	const call = `{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "step", "input": {}}}]}`
	tests := []struct{ name, messages, err string }{
		{"result of no call", `{"role": "user", "content": [{"text": "hi"}]}, {"role": "assistant", "content": [{"text": "hello"}]},
			{"role": "user", "content": [{"toolResult": {"toolUseId": "t9", "content": [{"text": "1"}]}}]}`,
			`converse: restore: message 2, block 0: the toolResult "t9" answers no toolUse of the message before`},
		{"result of another call", `{"role": "user", "content": [{"text": "hi"}]}, ` + call + `,
			{"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "1"}]}}, {"toolResult": {"toolUseId": "t2", "content": [{"text": "2"}]}}]}`,
			`converse: restore: message 2, block 1: the toolResult "t2" answers no toolUse of the message before`},
		{"result in the first message", `{"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "1"}]}}]}`,
			`converse: restore: message 0, block 0: the toolResult "t1" answers no toolUse of the message before`},
		{"server result of no call", `{"role": "user", "content": [{"text": "hi"}]}, {"role": "assistant", "content": [{"toolResult": {"toolUseId": "g1", "content": [{"text": "1"}]}}]}`,
			`converse: restore: message 1, block 0: the toolResult "g1" answers no toolUse of its message (a server tool's)`},
		{"unknown block", `{"role": "user", "content": [{"text": "hi"}, {"hologram": {"x": 1}}]}`,
			`converse: state: message 0, block 1: "hologram" is not a content block this package knows`},
		{"unknown result content", `{"role": "user", "content": [{"text": "hi"}]}, ` + call + `,
			{"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "1"}, {"hologram": {}}]}}]}`,
			`converse: state: message 2, block 0: toolResult content 1: "hologram" is not a content block this package knows`},
		{"server result", `{"role": "user", "content": [{"text": "hi"}]}, {"role": "assistant", "content": [
			{"toolUse": {"toolUseId": "g1", "name": "nova_grounding", "input": {}, "type": "server_tool_use"}},
			{"toolResult": {"toolUseId": "g1", "content": [{"text": "1"}], "type": "nova_grounding"}}, {"text": "done"}]}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st converse.State
			err := json.Unmarshal([]byte(`{"version": 1, "modelId": "`+claude+`", "messages": [`+tc.messages+`]}`), &st)
			if err == nil {
				_, client := serve(t, bedrocktest.Script())
				_, err = converse.Restore(client, nil, &st)
			}
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.err)
		})
	}
}
