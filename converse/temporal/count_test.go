package temporal_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
)

// weatherRounds asks for the weather of the cities one turn each, then
// answers.
func weatherRounds(cities ...string) bedrocktest.Handler {
	var replies []*bedrocktest.Reply
	for i, city := range cities {
		replies = append(replies, bedrocktest.ToolUse("", weather(fmt.Sprint("t", i+1), city)))
	}
	return bedrocktest.Script(append(replies, bedrocktest.Text("All sunny."))...)
}

// TestWorkflowCountsAsSendCounts: with a ContextPolicy that counts tokens,
// the workflow makes each count as an activity, with its agent's client.
// It sends Send's requests, counts included, and trims as Send does.
func TestWorkflowCountsAsSendCounts(t *testing.T) {
	cities := []string{"Paris", "Oslo", "Rome", "Lima", "Kyiv", "Bern"}
	opts := func(o *converse.Options) {
		o.Request.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: strings.Repeat("Report the weather. ", 40)}}
		o.Context = &converse.ContextPolicy{MaxInputTokens: 500, CountTokens: true}
	}
	_, got, srv := sendAndWorkflow(t, func() bedrocktest.Handler { return weatherRounds(cities...) }, opts, "The weather, city by city.")
	var counts, converses int
	var last *bedrocktest.Request
	for _, req := range srv.Requests() {
		if req.Operation == bedrocktest.OpCountTokens {
			counts++
			continue
		}
		converses++
		last = req
	}
	assert.Equal(t, len(cities)+1, converses)
	assert.Equal(t, converses, counts, "each turn's request counted, by the activity")
	require.NotNil(t, last)
	assert.Less(t, len(last.Messages), 2*len(cities)+1, "the last request was trimmed")
	assert.Equal(t, "All sunny.", got.Text)
}

// countless is a client without a CountTokens method.
type countless struct{ converse.Client }

// TestWorkflowCountsWithoutCountTokens: an agent whose client cannot count
// has the workflow estimate, as Send does: the same requests as a policy
// that does not count.
func TestWorkflowCountsWithoutCountTokens(t *testing.T) {
	run := func(count bool) []*bedrocktest.Request {
		srv := bedrocktest.NewServer(weatherRounds("Paris", "Oslo", "Rome"))
		t.Cleanup(srv.Close)
		env := clientEnv(t, countless{srv.Client()}, weatherRegistry(t, &ledger{}), func(o *ctemporal.Options) {
			o.Conversation = func(o *converse.Options) {
				o.Context = &converse.ContextPolicy{MaxInputTokens: 300, CountTokens: count}
			}
		})
		env.ExecuteWorkflow(ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: "The weather, city by city."})
		assert.Equal(t, "All sunny.", result(t, env).Text)
		return srv.Requests()
	}
	want, got := run(false), run(true)
	require.Len(t, got, len(want))
	for i := range want {
		assert.JSONEq(t, string(want[i].Body), string(got[i].Body), "request %d", i+1)
	}
}
