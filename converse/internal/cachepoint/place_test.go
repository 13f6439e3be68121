package cachepoint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/converse/internal/models"
)

func cp(ttl types.CacheTTL) types.CachePointBlock {
	return types.CachePointBlock{Type: types.CachePointTypeDefault, Ttl: ttl}
}

// placed says where in holds cache points, as field[index]@ttl.
func placed(in *bedrockruntime.ConverseInput) string {
	var where []string
	for _, p := range List(in) {
		var at string
		switch p.Field {
		case Tools:
			at = "tools"
		case System:
			at = "system"
		default:
			at = fmt.Sprintf("m%d", p.Msg)
		}
		where = append(where, fmt.Sprintf("%s[%d]%s", at, p.Index, ttlNote(p.TTL)))
	}
	return strings.Join(where, " ")
}

func ttlNote(ttl types.CacheTTL) string {
	if ttl == "" {
		return ""
	}
	return "@" + string(ttl)
}

func TestPlaceCachePoints(t *testing.T) {
	big := strings.Repeat("x", 20_000) // 5,000 tokens, over every model's minimum
	tools := &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name: aws.String("lookup"), Description: aws.String(big),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(map[string]any{"type": "object"})},
	}}}}
	system := []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: big}}
	u := func(blocks ...types.ContentBlock) types.Message {
		return types.Message{Role: types.ConversationRoleUser, Content: blocks}
	}
	a := func(blocks ...types.ContentBlock) types.Message {
		return types.Message{Role: types.ConversationRoleAssistant, Content: blocks}
	}
	txt := func(s string) types.ContentBlock { return &types.ContentBlockMemberText{Value: s} }
	doc := &types.ContentBlockMemberDocument{Value: types.DocumentBlock{Name: aws.String("d"), Format: types.DocumentFormatTxt,
		Source: &types.DocumentSourceMemberBytes{Value: []byte("doc")}}}
	point := func(ttl types.CacheTTL) types.ContentBlock {
		return &types.ContentBlockMemberCachePoint{Value: cp(ttl)}
	}
	use := func(id string) types.ContentBlock {
		return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String(id), Name: aws.String("lookup"), Input: document.NewLazyDocument(map[string]any{})}}
	}
	result := func(id string) types.ContentBlock {
		return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String(id),
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "found"}}}}
	}
	five := []types.Message{u(txt("q1")), a(txt("a1")), u(txt("q2")), a(txt("a2")), u(txt("q3"))}

	tests := []struct {
		name   string
		model  string
		ttl    types.CacheTTL
		system []types.SystemContentBlock
		tools  *types.ToolConfiguration
		msgs   []types.Message
		want   string
	}{
		{name: "claude: tools, system, two newest user messages", model: "anthropic.claude-3-7-sonnet-20250219-v1:0",
			system: system, tools: tools, msgs: five, want: "tools[1] system[1] m2[1] m4[1]"},
		{name: "without tools and system, four message points", model: "anthropic.claude-3-7-sonnet-20250219-v1:0",
			msgs: []types.Message{u(txt(big)), a(txt("a1")), u(txt("q2")), a(txt("a2")), u(txt("q3")), a(txt("a3")), u(txt("q4")), a(txt("a4")), u(txt("q5"))},
			want: "m2[1] m4[1] m6[1] m8[1]"},
		{name: "nova: no tools point", model: "us.amazon.nova-lite-v1:0", system: system, tools: tools, msgs: five,
			want: "system[1] m2[1] m3[1] m4[1]"},
		{name: "nova: none right after tool results", model: "us.amazon.nova-lite-v1:0", system: system, tools: tools,
			msgs: []types.Message{u(txt("q1")), a(use("t1")), u(result("t1")), a(use("t2")), u(result("t2"))},
			want: "system[1] m0[1] m1[1] m3[1]"},
		{name: "claude: right after tool results", model: "anthropic.claude-3-7-sonnet-20250219-v1:0", system: system, tools: tools,
			msgs: []types.Message{u(txt("q1")), a(use("t1")), u(result("t1")), a(use("t2")), u(result("t2"))},
			want: "tools[1] system[1] m2[1] m4[1]"},
		{name: "no caching for the model", model: "meta.llama3-1-70b-instruct-v1:0", system: system, tools: tools, msgs: five, want: ""},
		{name: "prefix under the minimum", model: "anthropic.claude-haiku-4-5-20251001-v1:0",
			system: []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: strings.Repeat("y", 12_000)}},
			msgs:   []types.Message{u(txt("q1"))}, want: ""},
		{name: "only the prefixes past the minimum", model: "anthropic.claude-3-7-sonnet-20250219-v1:0",
			msgs: []types.Message{u(txt("q1")), a(txt("a1")), u(txt(big)), a(txt("a2")), u(txt("q3"))}, want: "m2[1] m4[1]"},
		{name: "1h where the model takes it", model: "anthropic.claude-sonnet-4-5-20250929-v1:0", ttl: types.CacheTTLOneHour,
			system: system, msgs: five, want: "system[1]@1h m0[1]@1h m2[1]@1h m4[1]@1h"},
		{name: "1h becomes the default elsewhere", model: "anthropic.claude-3-7-sonnet-20250219-v1:0", ttl: types.CacheTTLOneHour,
			system: system, msgs: five, want: "system[1] m0[1] m2[1] m4[1]"},
		{name: "explicit 5m is kept", model: "anthropic.claude-3-7-sonnet-20250219-v1:0", ttl: types.CacheTTLFiveMinutes,
			system: system, msgs: five, want: "system[1]@5m m0[1]@5m m2[1]@5m m4[1]@5m"},
		{name: "the caller's system point counts, ours after it not longer", model: "anthropic.claude-sonnet-4-5-20250929-v1:0", ttl: types.CacheTTLOneHour,
			system: append(system[:1:1], &types.SystemContentBlockMemberCachePoint{Value: cp(types.CacheTTLFiveMinutes)}), tools: tools, msgs: five,
			want: "tools[1]@1h system[1]@5m m2[1] m4[1]"},
		{name: "the caller's old message point goes first", model: "anthropic.claude-3-7-sonnet-20250219-v1:0",
			system: system, tools: tools, msgs: []types.Message{u(txt("q1"), point("")), a(txt("a1")), u(txt("q2")), a(txt("a2")), u(txt("q3"))},
			want: "tools[1] system[1] m2[1] m4[1]"},
		{name: "a caller's longer point after ours drops ours", model: "anthropic.claude-sonnet-4-5-20250929-v1:0",
			system: system, tools: tools, msgs: []types.Message{u(txt("q1")), a(txt("a1")), u(txt("q2"), point(types.CacheTTLOneHour))},
			want: "m2[1]@1h"},
		{name: "no point right after a document", model: "anthropic.claude-3-7-sonnet-20250219-v1:0",
			system: system, msgs: []types.Message{u(txt("q1")), a(txt("a1")), u(txt("read"), doc)},
			want: "system[1] m0[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &bedrockruntime.ConverseInput{System: tt.system, ToolConfig: tt.tools, Messages: tt.msgs}
			before := placed(in)
			Place(models.Parse(tt.model), tt.ttl, in)
			assert.Equal(t, tt.want, placed(in))
			assert.Equal(t, before, placed(&bedrockruntime.ConverseInput{System: tt.system, ToolConfig: tt.tools, Messages: tt.msgs}),
				"the caller's slices are never written")
			assert.LessOrEqual(t, len(callerPoints(in)), models.MaxCachePoints)
		})
	}
}
