package converse_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

const nova = "us.amazon.nova-premier-v1:0"

var modes = []struct {
	name string
	opt  func(*converse.Options)
}{{"Converse", func(*converse.Options) {}}, {"ConverseStream", streaming}}

// clientCall is a client toolUse block as Bedrock returns it, with its
// undocumented type "tool_use".
func clientCall(id string, input map[string]any) types.ContentBlock {
	return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String(id), Name: aws.String("calculator"),
		Input: documentOf(input), Type: types.ToolUseType("tool_use")}}
}

func grounding(id string) []types.ContentBlock {
	return bedrocktest.ServerToolUse(bedrocktest.Call{ID: id, Name: "nova_grounding", Input: map[string]any{"query": "exchange rate"}}, "1 EUR = 1.08 USD")
}

// contentJSON returns the wire JSON of each message's content.
func contentJSON(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	out := make([]json.RawMessage, len(req.Messages))
	for i, m := range req.Messages {
		out[i] = m.Content
	}
	return out
}

// sentContent is what a client must echo of a reply Bedrock sent: its
// content on the wire, blank text blocks dropped and the type of client
// toolUse blocks removed.
func sentContent(t *testing.T, reply *bedrocktest.Reply) string {
	t.Helper()
	body, err := wire.EncodeConverseOutput(reply.Output)
	require.NoError(t, err)
	var out struct {
		Output struct {
			Message struct {
				Content []map[string]any `json:"content"`
			} `json:"message"`
		} `json:"output"`
	}
	require.NoError(t, json.Unmarshal(body, &out))
	var keep []map[string]any
	for _, b := range out.Output.Message.Content {
		if s, ok := b["text"].(string); ok && len(b) == 1 && isBlank(s) {
			continue
		}
		if tu, ok := b["toolUse"].(map[string]any); ok && tu["type"] == "tool_use" {
			delete(tu, "type")
		}
		keep = append(keep, b)
	}
	j, err := json.Marshal(keep)
	require.NoError(t, err)
	return string(j)
}

func isBlank(s string) bool {
	for _, r := range s {
		if r != ' ' && r != '\n' && r != '\t' {
			return false
		}
	}
	return true
}

// TestServerToolCallsAreEchoedNotRun: a turn with a server tool's call and
// result next to a client call runs and answers only the client call, and
// sends the server blocks back as Bedrock sent them.
func TestServerToolCallsAreEchoedNotRun(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			first := bedrocktest.Output(types.StopReasonToolUse,
				append(append([]types.ContentBlock{text("Let me look that up and add.")}, grounding("srv_1")...),
					clientCall("tooluse_1", map[string]any{"a": 1, "b": 2}))...)
			first.Chunk = 4
			srv, client := serve(t, bedrocktest.Script(first, citedAnswer()))
			var calls atomic.Int32
			c := converse.New(client, nova, countingCalculator(t, &calls), mode.opt,
				func(o *converse.Options) { o.SystemTools = []string{"nova_grounding"} })
			res, err := c.Send(context.Background(), "What is 1+2 euros in dollars?")
			require.NoError(t, err)
			assert.Equal(t, int32(1), calls.Load(), "only the client call runs")
			assert.Equal(t, 2, res.Turns)
			assert.Len(t, res.Citations, 3)

			reqs := srv.Requests()
			require.Len(t, reqs, 2)
			for _, r := range reqs {
				require.NotNil(t, r.ToolConfig)
				last := r.ToolConfig.Tools[len(r.ToolConfig.Tools)-1]
				require.IsType(t, &types.ToolMemberSystemTool{}, last)
				assert.Equal(t, "nova_grounding", aws.ToString(last.(*types.ToolMemberSystemTool).Value.Name))
			}
			content := contentJSON(t, reqs[1].Body)
			require.Len(t, content, 3)
			assert.JSONEq(t, sentContent(t, first), string(content[1]), "the assistant turn is echoed exactly")
			results := resultsOf(t, reqs[1].Messages[2])
			require.Len(t, results, 1, "the server call is not answered")
			assert.Equal(t, "tooluse_1", results[0].ID)
			assertValid(t, c, nova)
		})
	}
}

// TestToolUseTurnWithOnlyServerCalls: Bedrock normally ends a turn whose only
// calls it ran itself with end_turn. If it says tool_use, there is nothing for
// the client to answer (an empty user message would be rejected). So the Send
// ends there, keeping the turn in the history. The server's toolResult in that
// turn is no client's answer, so the conversation goes on with the next Send.
func TestToolUseTurnWithOnlyServerCalls(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			reply := bedrocktest.Output(types.StopReasonToolUse, append(grounding("srv_1"), text("It is 1.08 dollars."))...)
			srv, client := serve(t, bedrocktest.Script(reply, bedrocktest.Text("Two are 2.16 dollars.")))
			var calls atomic.Int32
			c := converse.New(client, nova, countingCalculator(t, &calls), mode.opt,
				func(o *converse.Options) { o.SystemTools = []string{"nova_grounding"} })
			res, err := c.Send(context.Background(), "One euro in dollars?")
			require.NoError(t, err)
			assert.Equal(t, types.StopReasonToolUse, res.StopReason)
			assert.Equal(t, "It is 1.08 dollars.", res.Text)
			assert.Equal(t, 1, res.Turns)
			assert.Len(t, srv.Requests(), 1)
			assert.Zero(t, calls.Load())
			h := c.History()
			require.Len(t, h, 2)
			assert.Len(t, h[1].Content, 3, "the server blocks stay in the history")
			assertValid(t, c, nova)

			_, err = c.Resume(context.Background())
			require.ErrorIs(t, err, converse.ErrNothingToResume)
			res, err = c.Send(context.Background(), "And two?")
			require.NoError(t, err)
			assert.Equal(t, "Two are 2.16 dollars.", res.Text)
			assert.Len(t, c.History(), 4)
			assertValid(t, c, nova)
		})
	}
}

func TestSystemToolsAlone(t *testing.T) {
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Output(types.StopReasonEndTurn, append(grounding("srv_1"), text("Sunny."))...)))
	res, err := converse.New(client, nova, nil, func(o *converse.Options) {
		o.SystemTools = []string{"nova_grounding", "nova_code_interpreter"}
	}).Send(context.Background(), "Weather?")

	require.NoError(t, err)
	assert.Equal(t, "Sunny.", res.Text)
	cfg := srv.Requests()[0].ToolConfig
	require.NotNil(t, cfg)
	require.Len(t, cfg.Tools, 2)
	assert.Equal(t, "nova_code_interpreter", aws.ToString(cfg.Tools[1].(*types.ToolMemberSystemTool).Value.Name))
}

// randomTurn is a tool_use turn of random blocks of every kind a response
// holds, with at least one client call, so that it is echoed.
func randomTurn(rng *rand.Rand) *bedrocktest.Reply {
	var blocks []types.ContentBlock
	n := 1 + rng.Intn(7)
	for i := range n {
		switch rng.Intn(7) {
		case 0:
			blocks = append(blocks, text(fmt.Sprintf("text %d ", i)))
		case 1:
			blocks = append(blocks, text([]string{"", " ", "\n"}[rng.Intn(3)]))
		case 2:
			blocks = append(blocks, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: types.ReasoningTextBlock{
				Text: aws.String(fmt.Sprintf("thinking %d", i)), Signature: aws.String(fmt.Sprintf("sig%d+/==", rng.Int63()))}}})
		case 3:
			redacted := make([]byte, 1+rng.Intn(40))
			rng.Read(redacted)
			blocks = append(blocks, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{Value: redacted}})
		case 4:
			blocks = append(blocks, cited(fmt.Sprintf("cited %d", i), pageCitation("Doc", int32(i), int32(i+1), "quote")))
		case 5:
			blocks = append(blocks, grounding(fmt.Sprintf("srv_%d", i))...)
		case 6:
			blocks = append(blocks, clientCall(fmt.Sprintf("tooluse_%d", i), map[string]any{"a": i, "b": 0.5}))
		}
	}
	blocks = append(blocks, clientCall("tooluse_last", map[string]any{"a": 1, "b": 1}))
	r := bedrocktest.Output(types.StopReasonToolUse, blocks...)
	r.Chunk = 1 + rng.Intn(6)
	return r
}

// TestEchoOfRandomTurns sends random mixes of block kinds through the loop,
// streamed and not, against a server that checks Bedrock's rules: every
// turn must be accepted, and echoed exactly (blank text dropped, the client
// toolUse's type removed).
func TestEchoOfRandomTurns(t *testing.T) {
	rng := rand.New(rand.NewSource(18))
	for i := range 40 {
		turn := randomTurn(rng)
		want := sentContent(t, turn)
		for _, mode := range modes {
			t.Run(fmt.Sprintf("%d/%s", i, mode.name), func(t *testing.T) {
				srv, client := serve(t, bedrocktest.Script(turn, bedrocktest.Text("done")))
				var calls atomic.Int32
				c := converse.New(client, claude, countingCalculator(t, &calls), mode.opt,
					func(o *converse.Options) { o.SystemTools = []string{"nova_grounding"} })
				_, err := c.Send(context.Background(), "go")
				require.NoError(t, err)
				reqs := srv.Requests()
				require.Len(t, reqs, 2)
				content := contentJSON(t, reqs[1].Body)
				assert.JSONEq(t, want, string(content[1]))
			})
		}
	}
}
