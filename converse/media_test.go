package converse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/internal/testimage"
	"github.com/tooluse/bedrock/converse/wirejson"
	"github.com/tooluse/bedrock/tools"
)

// mediaTool returns out, whatever its input.
func mediaTool(t testing.TB, name string, out tools.Result) *tools.Tool {
	t.Helper()
	tool, err := tools.NewRaw(name, "Returns media.", json.RawMessage(`{"type":"object"}`),
		func(context.Context, json.RawMessage) (any, error) { return out, nil })
	require.NoError(t, err)
	return tool
}

// sentBlocks describes the content of each toolResult of the last message
// the server received: "text:…", "json:…", "image:png:<bytes>" or
// "document:pdf:<name>:<bytes>".
func sentBlocks(t testing.TB, srv *bedrocktest.Server) [][]string {
	t.Helper()
	reqs := srv.Requests()
	require.NotEmpty(t, reqs)
	msgs := reqs[len(reqs)-1].Messages
	var out [][]string
	for _, b := range msgs[len(msgs)-1].Content {
		tr, ok := b.(*types.ContentBlockMemberToolResult)
		require.True(t, ok, "not a toolResult: %T", b)
		var blocks []string
		for _, c := range tr.Value.Content {
			switch v := c.(type) {
			case *types.ToolResultContentBlockMemberText:
				blocks = append(blocks, "text:"+v.Value)
			case *types.ToolResultContentBlockMemberJson:
				j, err := v.Value.MarshalSmithyDocument()
				require.NoError(t, err)
				blocks = append(blocks, "json:"+string(j))
			case *types.ToolResultContentBlockMemberImage:
				src := v.Value.Source.(*types.ImageSourceMemberBytes)
				blocks = append(blocks, fmt.Sprintf("image:%s:%d", v.Value.Format, len(src.Value)))
			case *types.ToolResultContentBlockMemberDocument:
				src := v.Value.Source.(*types.DocumentSourceMemberBytes)
				blocks = append(blocks, fmt.Sprintf("document:%s:%s:%d", v.Value.Format, aws.ToString(v.Value.Name), len(src.Value)))
			default:
				t.Fatalf("unexpected block %T", c)
			}
		}
		out = append(out, blocks)
	}
	return out
}

// sendMedia runs one turn of calls to the tools of reg, one call per tool
// name, against a validating bedrocktest, and returns the server and the
// ToolEnd events.
func sendMedia(t *testing.T, model string, reg *tools.Registry, optFns ...func(*converse.Options)) (*bedrocktest.Server, []converse.ToolEnd) {
	t.Helper()
	var calls []bedrocktest.Call
	for i, name := range reg.Names() {
		calls = append(calls, bedrocktest.Call{ID: fmt.Sprintf("t%d", i+1), Name: name, Input: map[string]any{}})
	}
	srv, client := serve(t, bedrocktest.Script(bedrocktest.ToolUse("", calls...), bedrocktest.Text("Seen.")))
	var ends []converse.ToolEnd
	opts := append([]func(*converse.Options){func(o *converse.Options) {
		o.OnEvent = func(ev converse.Event) {
			if e, ok := ev.(converse.ToolEnd); ok {
				ends = append(ends, e)
			}
		}
	}}, optFns...)
	res, err := converse.New(client, model, reg, opts...).Send(context.Background(), "Look.")
	require.NoError(t, err, "the request breaks none of Bedrock's rules")
	assert.Equal(t, "Seen.", res.Text)
	return srv, ends
}

func registry(t testing.TB, ts ...*tools.Tool) *tools.Registry {
	t.Helper()
	reg, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	return reg
}

func TestToolResultImageAndDocument(t *testing.T) {
	img, pdf := testimage.Plain(t, 10, 10), []byte("%PDF-1.7 a small report")
	for _, tc := range []struct {
		name  string
		json  bool
		first string
	}{{"text output", false, `text:{"rows":3}`}, {"json output beside media is text", true, `text:{"rows":3}`}} {
		t.Run(tc.name, func(t *testing.T) {
			reg := registry(t, mediaTool(t, "report", tools.Result{
				Output: map[string]int{"rows": 3},
				Media: []tools.Media{
					{Type: "image/png", Data: img},
					{Type: "application/pdf", Name: "q3_report.v2.pdf", Data: pdf},
				},
			}))
			srv, ends := sendMedia(t, claude, reg, func(o *converse.Options) { o.Tools.JSONContent = tc.json })
			assert.Equal(t, [][]string{{
				tc.first,
				fmt.Sprintf("image:png:%d", len(img)),
				fmt.Sprintf("document:pdf:q3_report v2:%d", len(pdf)),
			}}, sentBlocks(t, srv))
			require.Len(t, ends, 1)
			assert.Equal(t, []converse.MediaInfo{
				{Type: "image/png", Size: len(img)},
				{Type: "application/pdf", Name: "q3_report v2", Size: len(pdf)},
			}, ends[0].Media)
		})
	}
}

func TestToolResultMediaOnly(t *testing.T) {
	img := testimage.Plain(t, 4, 4)
	reg := registry(t, mediaTool(t, "snap", tools.Result{Media: []tools.Media{{Type: "image/png; charset=binary", Data: img}}}))
	srv, ends := sendMedia(t, claude, reg)
	assert.Equal(t, [][]string{{fmt.Sprintf("image:png:%d", len(img))}}, sentBlocks(t, srv), "no output block for a nil Output")
	assert.Nil(t, ends[0].Output)
}

func TestToolResultMediaLimits(t *testing.T) {
	small := testimage.Plain(t, 2, 2)
	images := func(n int) []tools.Media {
		m := make([]tools.Media, n)
		for i := range m {
			m[i] = tools.Media{Type: "image/png", Data: small}
		}
		return m
	}
	docs := func(n int) []tools.Media {
		m := make([]tools.Media, n)
		for i := range m {
			m[i] = tools.Media{Type: "text/csv", Name: fmt.Sprintf("sheet %d", i+1), Data: []byte("a,b\n1,2\n")}
		}
		return m
	}
	imageBlock := fmt.Sprintf("image:png:%d", len(small))
	docBlock := func(i int) string { return fmt.Sprintf("document:csv:sheet %d:8", i) }
	big := make([]byte, 4<<20)
	copy(big, small)
	for _, tc := range []struct {
		name  string
		tools [][]tools.Media // one tool per element
		want  func(got [][]string)
	}{{
		name:  "21 images",
		tools: [][]tools.Media{images(21)},
		want: func(got [][]string) {
			require.Len(t, got[0], 22)
			assert.Equal(t, imageBlock, got[0][20])
			assert.Equal(t, fmt.Sprintf("text:[image/png, %d B: left out, a message holds at most 20 images]", len(small)), got[0][21])
		},
	}, {
		name:  "21 images of two calls in one message",
		tools: [][]tools.Media{images(11), images(10)},
		want: func(got [][]string) {
			assert.Equal(t, imageBlock, got[0][11])
			assert.Equal(t, imageBlock, got[1][9], "the 20th image")
			assert.Equal(t, fmt.Sprintf("text:[image/png, %d B: left out, a message holds at most 20 images]", len(small)), got[1][10])
		},
	}, {
		name:  "a 4 MiB image",
		tools: [][]tools.Media{{{Type: "image/png", Data: big}}},
		want: func(got [][]string) {
			assert.Equal(t, "text:[image/png, 4.0 MiB: left out, larger than Bedrock's limit of 3.75 MB for an image]", got[0][1])
		},
	}, {
		name:  "an image 9000 px wide",
		tools: [][]tools.Media{{{Type: "image/png", Data: testimage.Plain(t, 9000, 2)}}},
		want: func(got [][]string) {
			assert.Regexp(t, `^text:\[image/png, \d+ B: left out, 9000×2 px, more than Bedrock's limit of 8000 px a side\]$`, got[0][1])
		},
	}, {
		name:  "an unreadable image",
		tools: [][]tools.Media{{{Type: "image/jpeg", Data: []byte("not a jpeg")}}},
		want: func(got [][]string) {
			assert.Equal(t, "text:[image/jpeg, 10 B: left out, not a readable jpeg image]", got[0][1])
		},
	}, {
		name:  "6 documents",
		tools: [][]tools.Media{docs(6)},
		want: func(got [][]string) {
			assert.Equal(t, docBlock(5), got[0][5])
			assert.Equal(t, "text:[text/csv, 8 B: left out, a message holds at most 5 documents]", got[0][6])
		},
	}, {
		name:  "a 5 MB document",
		tools: [][]tools.Media{{{Type: "text/plain", Name: "log", Data: make([]byte, 5_000_000)}}},
		want: func(got [][]string) {
			assert.Equal(t, "text:[text/plain, 4.8 MiB: left out, larger than Bedrock's limit of 4.5 MB for a document]", got[0][1])
		},
	}, {
		name: "names Bedrock rejects",
		tools: [][]tools.Media{{
			{Type: "text/markdown", Name: "../notes_2024\t\t(draft)[v1].md", Data: []byte("# x")},
			{Type: "text/markdown", Name: "日本語.md", Data: []byte("# y")},
		}},
		want: func(got [][]string) {
			assert.Equal(t, []string{"text:{}", "document:md:notes_2024 (draft)[v1]:3", "document:md:document 2:3"}, got[0])
		},
	}, {
		name:  "an unknown type",
		tools: [][]tools.Media{{{Type: "application/zip", Data: []byte("PK")}}},
		want: func(got [][]string) {
			assert.Equal(t, "text:[application/zip, 2 B: left out, not an image or document type Bedrock takes]", got[0][1])
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var ts []*tools.Tool
			for i, m := range tc.tools {
				ts = append(ts, mediaTool(t, fmt.Sprintf("tool%d", i), tools.Result{Output: map[string]any{}, Media: m}))
			}
			srv, _ := sendMedia(t, claude, registry(t, ts...))
			tc.want(sentBlocks(t, srv))
		})
	}
}

func TestToolResultMediaByModelFamily(t *testing.T) {
	img := testimage.Plain(t, 3, 3)
	doc := []byte("plain text")
	sentImage, sentDoc := fmt.Sprintf("image:png:%d", len(img)), "document:txt:notes:10"
	leftOut := func(model, kind string, size int, typ string) string {
		return fmt.Sprintf("text:[%s, %d B: left out, model %s takes no %s in tool results]", typ, size, model, kind)
	}
	for _, model := range []string{
		claude,
		"anthropic.claude-3-5-haiku-20241022-v1:0",
		nova,
		"us.amazon.nova-micro-v1:0",
		"us.meta.llama3-3-70b-instruct-v1:0",
		"mistral.mistral-large-2407-v1:0",
		"arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123",
	} {
		t.Run(model, func(t *testing.T) {
			reg := registry(t, mediaTool(t, "fetch", tools.Result{Output: "ok", Media: []tools.Media{
				{Type: "image/png", Data: img},
				{Type: "text/plain", Name: "notes.txt", Data: doc},
			}}))
			srv, ends := sendMedia(t, model, reg)
			image, document := leftOut(model, "images", len(img), "image/png"), leftOut(model, "documents", len(doc), "text/plain")
			switch model {
			case claude:
				image, document = sentImage, sentDoc
			case "anthropic.claude-3-5-haiku-20241022-v1:0":
				document = sentDoc
			case nova:
				image = sentImage
			}
			assert.Equal(t, [][]string{{`text:"ok"`, image, document}}, sentBlocks(t, srv))
			assert.Equal(t, image != sentImage, ends[0].Media[0].LeftOut != "")
		})
	}
}

func TestExecutorWithoutModelSendsEveryKind(t *testing.T) {
	img := testimage.Plain(t, 1, 1)
	e := &converse.Executor{Registry: registry(t, mediaTool(t, "fetch", tools.Result{Media: []tools.Media{
		{Type: "image/png", Data: img}, {Type: "text/html", Name: "page.html", Data: []byte("<p>")},
	}}))}
	out := e.Execute(context.Background(), []types.ContentBlock{toolUse("t1", "fetch", map[string]any{})})
	require.Len(t, out, 1)
	tr := out[0].(*types.ContentBlockMemberToolResult).Value
	require.Len(t, tr.Content, 2)
	assert.IsType(t, &types.ToolResultContentBlockMemberImage{}, tr.Content[0])
	assert.Equal(t, "page", aws.ToString(tr.Content[1].(*types.ToolResultContentBlockMemberDocument).Value.Name))
}

func TestMediaInfoString(t *testing.T) {
	for _, tc := range []struct {
		info converse.MediaInfo
		want string
	}{
		{converse.MediaInfo{Type: "image/png", Size: 512}, "[image/png, 512 B]"},
		{converse.MediaInfo{Type: "image/png", Size: 12 << 10}, "[image/png, 12 KiB]"},
		{converse.MediaInfo{Type: "application/pdf", Size: 3 << 20}, "[application/pdf, 3.0 MiB]"},
		{converse.MediaInfo{Type: "image/gif", Size: 2048, LeftOut: "why"}, "[image/gif, 2 KiB: left out, why]"},
	} {
		assert.Equal(t, tc.want, tc.info.String())
	}
}

// TestManyScreenshots: a tool that returns a 2,500 px screenshot each turn
// takes a conversation past 20 images, where Claude takes none larger than
// 2,000 px a side. From then on the large ones go as placeholders. Every
// request passes bedrocktest, which answers a request breaking the rule with
// Bedrock's error. The history keeps the images.
func TestManyScreenshots(t *testing.T) {
	shot := testimage.Plain(t, 2500, 100)
	reg := registry(t, mediaTool(t, "screenshot", tools.Result{Media: []tools.Media{{Type: "image/png", Data: shot}}}))
	var replies []*bedrocktest.Reply
	for i := range 22 {
		replies = append(replies, bedrocktest.ToolUse("", bedrocktest.Call{ID: fmt.Sprintf("t%d", i+1), Name: "screenshot", Input: map[string]any{}}))
	}
	srv, client := serve(t, bedrocktest.Script(append(replies, bedrocktest.Text("Seen them all."))...))
	c := converse.New(client, claude, reg, func(o *converse.Options) { o.MaxTurns = 30 })
	res, err := c.Send(context.Background(), "Watch the screen.")
	require.NoError(t, err)
	assert.Equal(t, "Seen them all.", res.Text)

	reqs := srv.Requests()
	require.Len(t, reqs, 23)
	images := func(r *bedrocktest.Request) (n int) {
		for _, m := range r.Messages {
			for _, b := range m.Content {
				if tr, ok := b.(*types.ContentBlockMemberToolResult); ok {
					for _, c := range tr.Value.Content {
						if _, ok := c.(*types.ToolResultContentBlockMemberImage); ok {
							n++
						}
					}
				}
			}
		}
		return n
	}
	assert.Equal(t, 20, images(reqs[20]), "20 screenshots go as they are")
	assert.Zero(t, images(reqs[21]), "past 20, none of them")
	assert.Contains(t, string(reqs[21].Body), "left out, a request of more than 20 images takes none larger than 2000 px a side")
	wire, err := wirejson.MarshalMessages(c.History())
	require.NoError(t, err)
	assert.Equal(t, 22, strings.Count(string(wire), `"image":`), "the history keeps every screenshot")
}
