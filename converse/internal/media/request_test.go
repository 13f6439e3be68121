package media

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/internal/models"
)

var (
	claudeModel = models.Parse("anthropic.claude-sonnet-4-5-20250929-v1:0")
	novaModel   = models.Parse("amazon.nova-pro-v1:0")
)

// conversation is a request's messages: a prompt, then for each element
// of turns a call and a user message answering it with those media. 'i'
// is an image and 'd' a document. 'D' is a document at the message's top
// level beside the result, as a SendMessage may send.
func conversation(turns ...string) []types.Message {
	msgs := []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "go"}}}}
	for n, turn := range turns {
		id := fmt.Sprintf("t%d", n)
		msgs = append(msgs, types.Message{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String(id), Name: aws.String("f")}}}})
		var inner []types.ToolResultContentBlock
		var top []types.ContentBlock
		for k, c := range turn {
			switch c {
			case 'i':
				inner = append(inner, img(5))
			case 'd':
				inner = append(inner, doc(fmt.Sprintf("d%d-%d", n, k)))
			case 'D':
				top = append(top, &types.ContentBlockMemberDocument{Value: types.DocumentBlock{Format: types.DocumentFormatTxt,
					Name: aws.String(fmt.Sprintf("D%d-%d", n, k)), Source: &types.DocumentSourceMemberBytes{Value: []byte("x")}}})
			}
		}
		msgs = append(msgs, types.Message{Role: types.ConversationRoleUser, Content: append([]types.ContentBlock{result(id, inner...)}, top...)})
	}
	return msgs
}

// sent describes the media of messages in order: "i" or "d" for one sent,
// "-" for a placeholder of Request's.
func sent(messages []types.Message) string {
	var b strings.Builder
	for _, msg := range messages {
		for _, block := range msg.Content {
			switch v := block.(type) {
			case *types.ContentBlockMemberDocument:
				b.WriteString("d")
			case *types.ContentBlockMemberText:
				if strings.Contains(v.Value, "which the newest take") {
					b.WriteString("-")
				}
			case *types.ContentBlockMemberToolResult:
				for _, c := range v.Value.Content {
					switch w := c.(type) {
					case *types.ToolResultContentBlockMemberImage:
						b.WriteString("i")
					case *types.ToolResultContentBlockMemberDocument:
						b.WriteString("d")
					case *types.ToolResultContentBlockMemberText:
						if strings.Contains(w.Value, "which the newest take") {
							b.WriteString("-")
						}
					}
				}
			}
		}
	}
	return b.String()
}

// i is n images, as conversation and sent write them.
func i(n int) string { return strings.Repeat("i", n) }

func TestRequest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model models.Model
		turns []string
		want  string
	}{
		{"within the limits", claudeModel, []string{"iiii", "ddd", "iiiiiiiiiii", "dD"}, "iiiidddiiiiiiiiiiidd"},
		{"6 documents over the messages", novaModel, []string{"dd", "i", "dD", "dd"}, "-didddd"},
		{"a prompt's documents count", novaModel, []string{"DDD", "DDD"}, "-ddddd"},
		{"101 images over the messages, Claude", claudeModel, []string{i(50), i(51)}, "-----" + i(96)},
		{"105 images over the messages, Claude", claudeModel, []string{i(50), i(55)}, "-----" + i(100)},
		{"106 images over the messages, Claude", claudeModel, []string{i(50), i(56)}, "----------" + i(96)},
		{"96 images and 5 documents in a message, Claude", claudeModel, []string{i(96) + "ddddd"}, "-----" + i(91) + "ddddd"},
		{"documents first, then the images", claudeModel, []string{"d" + i(88), i(10) + "ddddd"}, "------" + i(93) + "ddddd"},
		{"30 images, Nova", novaModel, []string{"iiiiiiiiiiiiiii", "iiiiiiiiiiiiiii"}, strings.Repeat("i", 30)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := conversation(tc.turns...)
			before := sent(msgs)
			got := Request(tc.model, msgs)
			assert.Equal(t, tc.want, sent(got))
			assert.Equal(t, before, sent(msgs), "no message of messages is written")
			images, docs := Count(got)
			assert.LessOrEqual(t, docs, models.MaxRequestDocuments)
			if max := tc.model.MaxRequestMedia(); max > 0 {
				assert.LessOrEqual(t, images+docs, max)
			}
			if before == tc.want {
				assert.Same(t, &msgs[0], &got[0], "messages itself when nothing changed")
			}
		})
	}
}

func TestRequestPlaceholders(t *testing.T) {
	msgs := conversation(i(101), "ddddd", "D")
	got := Request(claudeModel, msgs)
	require.Len(t, got, len(msgs))
	assert.Equal(t, "text:[image/jpeg, 5 B: left out, over the model's limit of 100 images and documents in a request, which the newest take]",
		results(got[2].Content)[0][0])
	assert.Equal(t, "text:[text/plain, 1 B: left out, over the request's limit of 5 documents, which the newest take]",
		results(got[4].Content)[0][0])
	assert.Equal(t, msgs[2].Content[0].(*types.ContentBlockMemberToolResult).Value.ToolUseId,
		got[2].Content[0].(*types.ContentBlockMemberToolResult).Value.ToolUseId, "the result answers its call still")
}

// TestRequestStable grows a conversation a medium at a time, as a
// conversation grows. It checks every request against the limits, and
// that a medium left out stays left out. It checks that the requests'
// messages change seldom, for the prompt cache: past Claude's limit, once
// every mediaStep images.
func TestRequestStable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, model := range []models.Model{claudeModel, novaModel} {
		var turns []string
		prev, changes := "", 0
		for range 200 {
			kinds := "iiiiiiiidD"
			turns = append(turns, string(kinds[r.IntN(len(kinds))]))
			got := sent(Request(model, conversation(turns...)))
			images, docs := strings.Count(got, "i"), strings.Count(got, "d")
			require.LessOrEqual(t, docs, models.MaxRequestDocuments)
			if max := model.MaxRequestMedia(); max > 0 {
				require.LessOrEqual(t, images+docs, max)
			}
			for i := range prev {
				require.False(t, prev[i] == '-' && got[i] != '-', "medium %d, left out, is sent again: %s after %s", i, got, prev)
			}
			if !strings.HasPrefix(got, prev) {
				changes++
			}
			prev = got
		}
		t.Logf("%s: the requests' earlier media changed %d times in 200 requests", model.Provider, changes)
	}

	var turns []string
	prev, changes := "", 0
	for range 200 {
		turns = append(turns, "i")
		got := sent(Request(claudeModel, conversation(turns...)))
		if !strings.HasPrefix(got, prev) {
			changes++
		}
		prev = got
	}
	assert.Equal(t, (200-100+mediaStep-1)/mediaStep, changes, "200 screenshots: the cut moves once every %d images past 100", mediaStep)
}
