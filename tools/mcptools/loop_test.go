package mcptools_test

import (
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// The model, played by bedrocktest, calls MCP tools through the loop: a
// result, an error result and an unknown tool each answer their call.
func TestCallsThroughTheLoop(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("Let me see.",
			bedrocktest.Call{ID: "t1", Name: "mem__echo", Input: map[string]any{"text": "hello"}},
			bedrocktest.Call{ID: "t2", Name: "mem__content", Input: map[string]any{"kind": "error"}},
			bedrocktest.Call{ID: "t3", Name: "mem__echo", Input: map[string]any{"text": 42}},
			bedrocktest.Call{ID: "t4", Name: "mem__content", Input: map[string]any{"kind": "image"}},
		),
		bedrocktest.Text("Done."),
	))
	defer srv.Close()
	_, reg := connect(t, inMemory(t, "mem", newTestServer(newFixture(), nil)))

	var mu sync.Mutex
	ends := map[string]converse.ToolEnd{}
	conv := converse.New(srv.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg, func(o *converse.Options) {
		o.OnEvent = func(ev converse.Event) {
			if end, ok := ev.(converse.ToolEnd); ok {
				mu.Lock()
				ends[end.ID] = end
				mu.Unlock()
			}
		}
	})
	res, err := conv.Send(t.Context(), "Echo hello.")
	require.NoError(t, err)
	assert.Equal(t, "Done.", res.Text)

	require.Len(t, ends, 4)
	assert.JSONEq(t, `{"echo":"hello"}`, string(ends["t1"].Output))
	require.Error(t, ends["t2"].Err)
	assert.Equal(t, "no such file", ends["t2"].Err.Error())
	require.Error(t, ends["t3"].Err)
	assert.Contains(t, ends["t3"].Err.Error(), "invalid input")

	// The image reaches the model as an image block of the toolResult.
	var image *types.ImageBlock
	for _, b := range srv.Requests()[1].Messages[2].Content {
		if r, ok := b.(*types.ContentBlockMemberToolResult); ok && *r.Value.ToolUseId == "t4" {
			for _, c := range r.Value.Content {
				if img, ok := c.(*types.ToolResultContentBlockMemberImage); ok {
					image = &img.Value
				}
			}
		}
	}
	require.NotNil(t, image, "no image in the result of t4")
	assert.Equal(t, types.ImageFormatPng, image.Format)
	assert.Equal(t, onePixelPNG, image.Source.(*types.ImageSourceMemberBytes).Value)
}
