package mcptools

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

// TestResultImageTypes: an image of an alias type, image/jpg or
// image/x-png, is passed on as media (converse reads its format from its
// bytes), as the canonical types are; another type is left out.
func TestResultImageTypes(t *testing.T) {
	for typ, media := range map[string]bool{
		"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true,
		"image/jpg": true, "image/x-png": true, "image/bmp": false,
	} {
		out, err := result(&mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: typ, Data: []byte("x")}}})
		require.NoError(t, err, typ)
		if media {
			assert.Equal(t, tools.Result{Media: []tools.Media{{Type: typ, Data: []byte("x")}}}, out, typ)
		} else {
			assert.Equal(t, "["+typ+" content left out]", out, typ)
		}
	}
}
