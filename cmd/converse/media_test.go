package main

import (
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestTraceShowsMedia: a command tool answers with a media envelope (the echo
// helper writes back the input the model sent, here an envelope). The image
// reaches the model inside the toolResult. The -v trace shows it as its type
// and size, never its bytes.
func TestTraceShowsMedia(t *testing.T) {
	manifest := writeManifest(t, `{"tools": [{"name": "echo", "description": "Echo.",
		"command": [`+quote(os.Args[0])+`, "helper-tool", "echo"]}]}`)
	// base64 of 12 KiB: a webp header of 8 × 8 px (RIFF, its length,
	// WEBPVP8X, the chunk's length, flags, width - 1 and height - 1), then
	// zeros
	data := "UklGRvgvAABXRUJQVlA4WAoAAAAAAAAABwAABwAA" + strings.Repeat("A", 16<<10-40)
	srv := newServer(t, bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "echo", Input: map[string]any{
			"output": map[string]any{"rows": 3},
			"$media": []any{map[string]any{"type": "image/webp", "name": "chart", "data": data}},
		}}),
		bedrocktest.Text("A chart."),
	))
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-model", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "-tools", manifest, "-v", "Draw it.")
	require.Equal(t, 0, out.code, out.stderr)
	mustContain(t, "stderr", out.stderr, `← echo t1 success in `, `: {"rows":3} [image/webp, 12 KiB]`)
	for _, line := range strings.Split(out.stderr, "\n") {
		if strings.HasPrefix(line, "← ") {
			assert.NotContains(t, line, "AAAA", "no media bytes in the result's trace")
		}
	}
	r := toolResults(t, srv.Requests()[1])["t1"]
	require.Len(t, r.Content, 2)
	img, ok := r.Content[1].(*types.ToolResultContentBlockMemberImage)
	require.True(t, ok, "%T", r.Content[1])
	assert.Equal(t, types.ImageFormatWebp, img.Value.Format)
	assert.Len(t, img.Value.Source.(*types.ImageSourceMemberBytes).Value, 12<<10)
}
