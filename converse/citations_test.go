package converse_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/citation"
	"github.com/tooluse/bedrock/converse/wirejson"
)

// cited is a citationsContent block: generated text and its citations.
func cited(text string, cits ...types.Citation) types.ContentBlock {
	return &types.ContentBlockMemberCitationsContent{Value: types.CitationsContentBlock{
		Content:   []types.CitationGeneratedContent{&types.CitationGeneratedContentMemberText{Value: text}},
		Citations: cits,
	}}
}

func pageCitation(title string, start, end int32, quote string) types.Citation {
	return types.Citation{
		Title:         aws.String(title),
		Location:      &types.CitationLocationMemberDocumentPage{Value: types.DocumentPageLocation{DocumentIndex: aws.Int32(0), Start: aws.Int32(start), End: aws.Int32(end)}},
		SourceContent: []types.CitationSourceContent{&types.CitationSourceContentMemberText{Value: quote}},
	}
}

func webCitation(url, domain string) types.Citation {
	return types.Citation{Location: &types.CitationLocationMemberWeb{Value: types.WebLocation{Url: aws.String(url), Domain: aws.String(domain)}}}
}

// citedAnswer is an answer as Claude gives it with citations enabled: the
// generated text split over text and citationsContent blocks.
func citedAnswer() *bedrocktest.Reply {
	return bedrocktest.Output(types.StopReasonEndTurn,
		text("According to the report, "),
		cited("revenue grew 5% in 2024", pageCitation("Annual report", 3, 4, "Revenue rose by 5%.")),
		text(" and "),
		cited("the outlook is stable", webCitation("https://example.com/outlook", "example.com")),
		text("."),
		text(" "), // between cited sentences, as Claude writes it: blank, so not kept
		cited("Costs fell.", pageCitation("Annual report", 7, 8, "Costs fell by 2%.")),
	)
}

// TestCitedAnswer checks that an answer given in citationsContent blocks is
// the Result's text, in order, with its citations, through Converse and
// ConverseStream alike. The blank block between two cited sentences is
// included, though the history cannot keep it. The Text events spell the same
// text.
func TestCitedAnswer(t *testing.T) {
	const want = "According to the report, revenue grew 5% in 2024 and the outlook is stable. Costs fell."
	wantCitations := []citation.Citation{
		{Text: "revenue grew 5% in 2024", Title: "Annual report", Kind: citation.Page,
			Location: citation.Location{Start: 3, End: 4}, Quotes: []string{"Revenue rose by 5%."}},
		{Text: "the outlook is stable", Kind: citation.Web,
			Location: citation.Location{URL: "https://example.com/outlook", Domain: "example.com"}},
		{Text: "Costs fell.", Title: "Annual report", Kind: citation.Page,
			Location: citation.Location{Start: 7, End: 8}, Quotes: []string{"Costs fell by 2%."}},
	}
	results := map[string]*converse.Result{}
	for _, mode := range []struct {
		name string
		opt  func(*converse.Options)
	}{{"Converse", func(*converse.Options) {}}, {"ConverseStream", streaming}} {
		t.Run(mode.name, func(t *testing.T) {
			reply := citedAnswer()
			reply.Chunk = 5
			_, client := serve(t, bedrocktest.Script(reply))
			var events strings.Builder
			c := converse.New(client, claude, nil, mode.opt, func(o *converse.Options) {
				o.OnEvent = func(ev converse.Event) {
					if e, ok := ev.(converse.Text); ok {
						events.WriteString(e.Text)
					}
				}
			})
			res, err := c.Send(context.Background(), "How did the company do?")
			require.NoError(t, err)
			assert.Equal(t, want, res.Text)
			assert.Equal(t, want, events.String())
			assert.Equal(t, wantCitations, res.Citations)
			results[mode.name] = res
			assertValid(t, c, claude)
		})
	}
	require.Len(t, results, 2)
	plain, err := wirejson.MarshalMessages([]types.Message{results["Converse"].Message})
	require.NoError(t, err)
	streamed, err := wirejson.MarshalMessages([]types.Message{results["ConverseStream"].Message})
	require.NoError(t, err)
	assert.JSONEq(t, string(plain), string(streamed))
}
