package mcptools

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/internal/modelerr"
)

// imageTypes are the image media types the model reads, with the aliases
// image/jpg and image/x-png that some servers send (converse takes them).
var imageTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true,
	"image/jpg": true, "image/x-png": true,
}

// documentTypes are the document media types the model reads.
var documentTypes = map[string]bool{
	"application/pdf": true, "text/csv": true, "text/plain": true, "text/markdown": true, "text/html": true,
	"application/msword": true,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": true,
	"application/vnd.ms-excel": true,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": true,
}

// result maps a tool's result to its output: an error for isError, text or
// a structured object, with media in a tools.Result.
func result(res *mcp.CallToolResult) (any, error) {
	var text []string
	var media []tools.Media
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			text = append(text, c.Text)
		case *mcp.ImageContent:
			if imageTypes[c.MIMEType] {
				media = append(media, tools.Media{Type: c.MIMEType, Data: c.Data})
			} else {
				text = append(text, leftOut(c.MIMEType, "image"))
			}
		case *mcp.AudioContent:
			text = append(text, leftOut(c.MIMEType, "audio"))
		case *mcp.ResourceLink:
			text = append(text, fmt.Sprintf("[a link to the resource %s left out]", c.URI))
		case *mcp.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
			case r.Blob == nil:
				text = append(text, r.Text)
			case documentTypes[r.MIMEType]:
				media = append(media, tools.Media{Type: r.MIMEType, Name: path.Base(r.URI), Data: r.Blob})
			case imageTypes[r.MIMEType]:
				media = append(media, tools.Media{Type: r.MIMEType, Data: r.Blob})
			default:
				text = append(text, leftOut(r.MIMEType, "resource"))
			}
		default:
			text = append(text, "[content of an unknown kind left out]")
		}
	}
	joined := strings.Join(text, "\n")
	if res.IsError {
		if strings.TrimSpace(joined) == "" {
			joined = "the tool reported an error without saying why"
		}
		return nil, modelerr.Errorf(ErrToolFailed, "%s", joined)
	}
	var out any = joined
	if res.StructuredContent != nil {
		// Any JSON value: an object, and since the 2026-07-28 protocol
		// also an array or a primitive.
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out = json.RawMessage(b)
		}
	}
	if len(media) > 0 {
		if joined == "" && res.StructuredContent == nil {
			out = nil
		}
		return tools.Result{Output: out, Media: media}, nil
	}
	return out, nil
}

// leftOut is the placeholder of content the model does not get.
func leftOut(mediaType, kind string) string {
	if mediaType == "" {
		mediaType = kind
	}
	return "[" + mediaType + " content left out]"
}
