package converse_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/internal/testimage"
	"github.com/tooluse/bedrock/tools"
)

// requestMedia counts the images and documents of every message of a
// request, at the top level and inside toolResult blocks.
func requestMedia(msgs []types.Message) (images, docs int) {
	for _, m := range msgs {
		for _, b := range m.Content {
			switch v := b.(type) {
			case *types.ContentBlockMemberImage:
				images++
			case *types.ContentBlockMemberDocument:
				docs++
			case *types.ContentBlockMemberToolResult:
				for _, c := range v.Value.Content {
					switch c.(type) {
					case *types.ToolResultContentBlockMemberImage:
						images++
					case *types.ToolResultContentBlockMemberDocument:
						docs++
					}
				}
			}
		}
	}
	return images, docs
}

// TestRequestMediaLimits: the limits of a whole request, over its
// messages, are kept in each request, the oldest media left out, and the
// history keeps every medium. Every request passes bedrocktest, which
// answers one of more than 5 documents, or for Claude of more than 20
// images and documents, with Bedrock's error.
func TestRequestMediaLimits(t *testing.T) {
	img := testimage.Plain(t, 8, 8)
	image := tools.Media{Type: "image/png", Data: img}
	doc := func(name string) tools.Media {
		return tools.Media{Type: "text/plain", Name: name, Data: []byte("hello")}
	}
	for _, tc := range []struct {
		name   string
		model  string
		turns  [][]tools.Media // a prompt, one call, its media: one Send each
		images int             // of the last request
		docs   int
	}{{
		// A screenshot a prompt: Claude answers the 101st with "too many
		// images and documents: 101 + 0 > 100".
		name:   "an image a prompt, 101 prompts, Claude",
		model:  claude,
		turns:  repeated(101, []tools.Media{image}),
		images: 96,
	}, {
		name:   "100 images in 5 results, then 5 documents, Claude",
		model:  claude,
		turns:  append(repeated(5, repeated(20, image)), []tools.Media{doc("a"), doc("b"), doc("c"), doc("d"), doc("e")}),
		images: 95, docs: 5,
	}, {
		name:  "a document a prompt, 7 prompts, Claude",
		model: claude,
		turns: [][]tools.Media{{doc("a")}, {doc("b")}, {doc("c")}, {doc("d")}, {doc("e")}, {doc("f")}, {doc("g")}},
		docs:  5,
	}, {
		name:   "an image a prompt, 25 prompts, Nova",
		model:  nova,
		turns:  repeated(25, []tools.Media{image}),
		images: 25,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var replies []*bedrocktest.Reply
			for i := range tc.turns {
				replies = append(replies, bedrocktest.ToolUse("", bedrocktest.Call{ID: fmt.Sprintf("s%d", i), Name: fmt.Sprintf("tool%d", i), Input: map[string]any{}}), bedrocktest.Text("seen"))
			}
			var ts []*tools.Tool
			for i, m := range tc.turns {
				ts = append(ts, mediaTool(t, fmt.Sprintf("tool%d", i), tools.Result{Output: "ok", Media: m}))
			}
			srv, client := serve(t, bedrocktest.Script(replies...))
			c := converse.New(client, tc.model, registry(t, ts...))
			for i := range tc.turns {
				_, err := c.Send(context.Background(), fmt.Sprintf("prompt %d", i))
				require.NoError(t, err, "prompt %d", i)
			}
			reqs := srv.Requests()
			images, docs := requestMedia(reqs[len(reqs)-1].Messages)
			assert.Equal(t, [2]int{tc.images, tc.docs}, [2]int{images, docs}, "the last request's images and documents")
			var total int
			for _, m := range tc.turns {
				total += len(m)
			}
			hi, hd := requestMedia(c.History())
			assert.Equal(t, total, hi+hd, "the history keeps every medium")
		})
	}
}

// TestSendMessageDocumentsCount: the documents of a user's own message
// count among the request's, and go first when they are the oldest.
func TestSendMessageDocumentsCount(t *testing.T) {
	userDoc := func(name string) types.ContentBlock {
		return &types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatTxt, Name: aws.String(name),
			Source: &types.DocumentSourceMemberBytes{Value: []byte("text")}}}
	}
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("one"), bedrocktest.Text("two")))
	c := converse.New(client, claude, nil)
	_, err := c.SendMessage(context.Background(), types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
		&types.ContentBlockMemberText{Value: "read these"}, userDoc("a"), userDoc("b"), userDoc("c")}})
	require.NoError(t, err)
	_, err = c.SendMessage(context.Background(), types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{
		&types.ContentBlockMemberText{Value: "and these"}, userDoc("d"), userDoc("e"), userDoc("f")}})
	require.NoError(t, err, "6 documents in the history, 5 in the request")
	last := srv.Requests()[1].Messages
	_, docs := requestMedia(last)
	assert.Equal(t, 5, docs)
	assert.Equal(t, "[text/plain, 4 B: left out, over the request's limit of 5 documents, which the newest take]",
		last[0].Content[1].(*types.ContentBlockMemberText).Value, "the oldest")
	_, kept := requestMedia(c.History())
	assert.Equal(t, 6, kept, "the history keeps every document")
}

// TestToolResultMediaBytes: media whose bytes Bedrock would reject are
// left out with a reason, or sent in the format their bytes are of.
func TestToolResultMediaBytes(t *testing.T) {
	jpg := testimage.JPEG(t, 16, 16)
	png := testimage.Plain(t, 8, 8)
	for _, tc := range []struct {
		name  string
		media tools.Media
		sent  string // the block sent after the output
		info  converse.MediaInfo
	}{{
		name:  "a webp of 9000 px a side",
		media: tools.Media{Type: "image/webp", Data: testimage.WebP(9000, 9000)},
		sent:  "text:[image/webp, 30 B: left out, 9000×9000 px, more than Bedrock's limit of 8000 px a side]",
	}, {
		name:  "a webp",
		media: tools.Media{Type: "image/webp", Data: testimage.WebP(100, 100)},
		sent:  "image:webp:30",
		info:  converse.MediaInfo{Type: "image/webp", Size: 30},
	}, {
		name:  "png bytes labelled image/webp",
		media: tools.Media{Type: "image/webp", Data: png},
		sent:  fmt.Sprintf("image:png:%d", len(png)),
		info:  converse.MediaInfo{Type: "image/png", Size: len(png)},
	}, {
		name:  "a jpeg labelled image/png",
		media: tools.Media{Type: "image/png", Data: jpg},
		sent:  fmt.Sprintf("image:jpeg:%d", len(jpg)),
		info:  converse.MediaInfo{Type: "image/jpeg", Size: len(jpg)},
	}, {
		name:  "image/jpg",
		media: tools.Media{Type: "image/jpg", Data: jpg},
		sent:  fmt.Sprintf("image:jpeg:%d", len(jpg)),
		info:  converse.MediaInfo{Type: "image/jpg", Size: len(jpg)},
	}, {
		name:  "a png cut after its header",
		media: tools.Media{Type: "image/png", Data: testimage.Noise(t, 64, 64)[:64]},
		sent:  "text:[image/png, 64 B: left out, a truncated png image, no IEND chunk]",
	}, {
		name:  "an empty document",
		media: tools.Media{Type: "text/plain", Name: "empty"},
		sent:  "text:[text/plain, 0 B: left out, empty]",
	}, {
		name:  "an empty webp",
		media: tools.Media{Type: "image/webp", Data: []byte{}},
		sent:  "text:[image/webp, 0 B: left out, empty]",
	}, {
		name:  "a pdf that is not one",
		media: tools.Media{Type: "application/pdf", Name: "r", Data: []byte("<html>404 not found</html>")},
		sent:  "text:[application/pdf, 26 B: left out, not a pdf document]",
	}, {
		name:  "a docx that is not one",
		media: tools.Media{Type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", Name: "w", Data: []byte("plain")},
		sent:  "text:[application/vnd.openxmlformats-officedocument.wordprocessingml.document, 5 B: left out, not a docx document]",
	}, {
		name:  "a name with a dot that is no extension",
		media: tools.Media{Type: "text/markdown", Name: "v1.2 release notes.md", Data: []byte("# notes")},
		sent:  "document:md:v1 2 release notes:7",
		info:  converse.MediaInfo{Type: "text/markdown", Name: "v1 2 release notes", Size: 7},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			reg := registry(t, mediaTool(t, "shot", tools.Result{Output: "ok", Media: []tools.Media{tc.media}}))
			srv, ends := sendMedia(t, claude, reg)
			assert.Equal(t, [][]string{{`text:"ok"`, tc.sent}}, sentBlocks(t, srv))
			require.Len(t, ends, 1)
			if tc.info != (converse.MediaInfo{}) {
				assert.Equal(t, []converse.MediaInfo{tc.info}, ends[0].Media)
			} else {
				assert.NotEmpty(t, ends[0].Media[0].LeftOut)
			}
		})
	}
}

// repeated is n copies of v.
func repeated[T any](n int, v T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}
