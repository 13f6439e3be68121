package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// groundedAnswer is a Nova answer with web grounding: the server tool's
// call and result, then the answer in text and citationsContent blocks.
func groundedAnswer() *bedrocktest.Reply {
	blocks := bedrocktest.ServerToolUse(bedrocktest.Call{ID: "srv_1", Name: "nova_grounding", Input: map[string]any{"query": "report"}}, "search results")
	blocks = append(blocks,
		&types.ContentBlockMemberText{Value: "Revenue "},
		&types.ContentBlockMemberCitationsContent{Value: types.CitationsContentBlock{
			Content: []types.CitationGeneratedContent{&types.CitationGeneratedContentMemberText{Value: "grew 5%"}},
			Citations: []types.Citation{
				{Title: aws.String("Annual report"), Location: &types.CitationLocationMemberDocumentPage{Value: types.DocumentPageLocation{Start: aws.Int32(3)}}},
				{Location: &types.CitationLocationMemberWeb{Value: types.WebLocation{Url: aws.String("https://example.com/\x1b[2Jnews"), Domain: aws.String("example.com")}}},
			},
		}},
		&types.ContentBlockMemberText{Value: "."},
	)
	return bedrocktest.Output(types.StopReasonEndTurn, blocks...)
}

// TestCitationsAreShown: an answer given in citationsContent blocks is
// printed whole, its sources listed after it (model-controlled text
// escaped), and the system tools of -system-tool reach the tool
// configuration.
func TestCitationsAreShown(t *testing.T) {
	const nova = "us.amazon.nova-premier-v1:0"
	srv := newServer(t, bedrocktest.Script(groundedAnswer()))
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-model", nova, "-no-builtins",
		"-system-tool", "nova_grounding", "-system-tool", "nova_code_interpreter", "How did revenue do?")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Revenue grew 5%.\n[1] Annual report, page 3\n[2] \"https://example.com/\\x1b[2Jnews\"\n", out.stdout)
	cfg := srv.Requests()[0].ToolConfig
	require.NotNil(t, cfg)
	var names []string
	for _, tool := range cfg.Tools {
		if st, ok := tool.(*types.ToolMemberSystemTool); ok {
			names = append(names, aws.ToString(st.Value.Name))
		}
	}
	assert.Equal(t, []string{"nova_grounding", "nova_code_interpreter"}, names)
}

func TestCitationsInJSON(t *testing.T) {
	srv := newServer(t, bedrocktest.Script(groundedAnswer()))
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-json", "-system-tool", "nova_grounding", "How did revenue do?")
	require.Equal(t, 0, out.code, out.stderr)
	var got struct {
		Text      string
		Citations []map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(out.stdout), &got), out.stdout)
	assert.Equal(t, "Revenue grew 5%.", got.Text)
	require.Len(t, got.Citations, 2)
	assert.Equal(t, map[string]any{"text": "grew 5%", "title": "Annual report", "kind": "page", "index": 0.0, "start": 3.0, "end": 0.0}, got.Citations[0])
	assert.Equal(t, "web", got.Citations[1]["kind"])
	assert.Equal(t, "example.com", got.Citations[1]["domain"])
}

func TestEmptySystemToolIsAUsageError(t *testing.T) {
	out := runInProcess(t, nil, "-system-tool", " ", "hi")
	assert.Equal(t, 2, out.code)
	assert.True(t, strings.Contains(out.stderr, "system-tool"), out.stderr)
}

// TestJSONHelpDocumentsCitations: "converse help json" shows the citations
// array and describes every field of a citation that -json prints.
func TestJSONHelpDocumentsCitations(t *testing.T) {
	text := helpText("json")
	assert.Contains(t, text, `"citations": [{`)
	fields := reflect.TypeFor[jsonCitation]()
	for i := range fields.NumField() {
		name, _, _ := strings.Cut(fields.Field(i).Tag.Get("json"), ",")
		assert.Contains(t, text, "\n  "+name+" ", "the json help describes %s", name)
	}
}
