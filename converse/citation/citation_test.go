package citation_test

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/converse/citation"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		c    citation.Citation
		want string
	}{
		// End is exclusive: Claude on Bedrock cites page 1 of a one-page PDF as
		// documentPage {start 1, end 2} (a capture of Converse, 2026-09).
		{citation.Citation{Title: "MyDocument", Kind: citation.Page, Location: citation.Location{Start: 1, End: 2}}, "MyDocument, page 1"},
		{citation.Citation{Title: "Annual report", Kind: citation.Page, Location: citation.Location{Start: 3, End: 3}}, "Annual report, page 3"},
		{citation.Citation{Title: "Annual report", Kind: citation.Page, Location: citation.Location{Start: 3, End: 5}}, "Annual report, pages 3-4"},
		{citation.Citation{Source: "notes.txt", Kind: citation.Char, Location: citation.Location{Start: 10, End: 42}}, "notes.txt, characters 10-41"},
		{citation.Citation{Title: "Manual", Kind: citation.Chunk, Location: citation.Location{Start: 2, End: 3}}, "Manual, chunk 2"},
		{citation.Citation{Title: "Manual", Kind: citation.Chunk, Location: citation.Location{Start: 2}}, "Manual, chunk 2"},
		{citation.Citation{Title: "KB", Kind: citation.SearchResult, Location: citation.Location{Index: 1}}, "KB, search result 1"},
		{citation.Citation{Kind: citation.Web, Location: citation.Location{URL: "https://example.com/a", Domain: "example.com"}}, "https://example.com/a"},
		{citation.Citation{Title: "Example", Kind: citation.Web, Location: citation.Location{Domain: "example.com"}}, "Example, example.com"},
		{citation.Citation{Title: "Untyped"}, "Untyped"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.c.String())
		})
	}
}

// ExampleFromMessage reads the citations of an answer that cites a page
// range of a document and a web page.
func ExampleFromMessage() {
	cited := func(text, title string, loc types.CitationLocation) types.ContentBlock {
		return &types.ContentBlockMemberCitationsContent{Value: types.CitationsContentBlock{
			Content:   []types.CitationGeneratedContent{&types.CitationGeneratedContentMemberText{Value: text}},
			Citations: []types.Citation{{Title: aws.String(title), Location: loc}},
		}}
	}
	answer := types.Message{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{
		&types.ContentBlockMemberText{Value: "According to the report, "},
		cited("revenue grew 5%", "Annual report", &types.CitationLocationMemberDocumentPage{Value: types.DocumentPageLocation{
			DocumentIndex: aws.Int32(0), Start: aws.Int32(3), End: aws.Int32(5)}}),
		&types.ContentBlockMemberText{Value: " and "},
		cited("the outlook is stable", "", &types.CitationLocationMemberWeb{Value: types.WebLocation{
			Url: aws.String("https://example.com/outlook"), Domain: aws.String("example.com")}}),
	}}
	for _, c := range citation.FromMessage(answer) {
		fmt.Printf("%q: %s\n", c.Text, c)
	}
	// Output:
	// "revenue grew 5%": Annual report, pages 3-4
	// "the outlook is stable": https://example.com/outlook
}
