package converse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/internal/cachepoint"
	"github.com/tooluse/bedrock/tools"
)

// lookupTools returns a registry of n tools with long descriptions, as a
// real tool set has.
func lookupTools(t testing.TB, n int) *tools.Registry {
	t.Helper()
	type in struct {
		Query string `json:"query" jsonschema:"what to look up"`
	}
	var ts []*tools.Tool
	for i := range n {
		tool, err := tools.New(fmt.Sprintf("lookup_%d", i),
			fmt.Sprintf("Looks up records of kind %d. ", i)+strings.Repeat("It searches the archive by keyword and returns the matching records. ", 12),
			func(ctx context.Context, q in) (map[string]string, error) {
				return map[string]string{"query": q.Query, "record": strings.Repeat("data ", 40)}, nil
			})
		require.NoError(t, err)
		ts = append(ts, tool)
	}
	reg, err := tools.NewRegistry(ts...)
	require.NoError(t, err)
	return reg
}

// toolLoop is a script of turns-1 tool calls and a final answer.
func toolLoop(turns int) bedrocktest.Handler {
	var replies []*bedrocktest.Reply
	for i := 1; i < turns; i++ {
		replies = append(replies, bedrocktest.ToolUse("", bedrocktest.Call{
			ID: fmt.Sprintf("tooluse_%d", i), Name: fmt.Sprintf("lookup_%d", i%3), Input: map[string]any{"query": fmt.Sprint("q", i)},
		}))
	}
	return bedrocktest.Script(append(replies, bedrocktest.Text("done"))...)
}

func systemPrompt(tokens int) []types.SystemContentBlock {
	return []types.SystemContentBlock{&types.SystemContentBlockMemberText{
		Value: strings.Repeat("You are a careful archivist. ", tokens*4/29+1),
	}}
}

// describePoints says where a request holds cache points.
func describePoints(req *bedrocktest.Request) string {
	var where []string
	in := &bedrockruntime.ConverseInput{ToolConfig: req.ToolConfig, System: req.System, Messages: req.Messages}
	for _, p := range cachepoint.List(in) {
		var at string
		switch p.Field {
		case cachepoint.Tools:
			at = fmt.Sprintf("tools[%d]", p.Index)
		case cachepoint.System:
			at = fmt.Sprintf("system[%d]", p.Index)
		default:
			at = fmt.Sprintf("messages[%d].content[%d]", p.Msg, p.Index)
		}
		if p.TTL != "" {
			at += "@" + string(p.TTL)
		}
		where = append(where, at)
	}
	if len(where) == 0 {
		return "none"
	}
	return strings.Join(where, " ")
}

// turnUsage is the usage of a turn, as its TurnEnd event reports it.
func turnUsage(t *testing.T, turn int, events []converse.Event) converse.Usage {
	t.Helper()
	for _, ev := range events {
		if te, ok := ev.(converse.TurnEnd); ok && te.Turn == turn {
			return te.Usage
		}
	}
	t.Fatalf("no TurnEnd for turn %d", turn)
	return converse.Usage{}
}

// TestCachePointsGolden runs a 5-turn tool loop with Options.Cache for a
// Claude model (with Converse and ConverseStream), a Nova model and a model
// without prompt caching. It runs through a validating bedrocktest that
// simulates the cache. It compares where the cache points went and what each
// turn read and wrote with testdata/cache-*.golden (go test -run
// TestCachePointsGolden -update writes them anew).
func TestCachePointsGolden(t *testing.T) {
	for _, tt := range []struct {
		name, model, golden string
		stream              bool
	}{
		{"claude", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude", false},
		{"claude streaming", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude", true},
		{"nova", "us.amazon.nova-pro-v1:0", "nova", false},
		{"nocache", "meta.llama3-1-70b-instruct-v1:0", "nocache", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, client := serve(t, toolLoop(5), func(o *bedrocktest.Options) { o.Accounting = true })
			var events []converse.Event
			c := converse.New(client, tt.model, lookupTools(t, 6), func(o *converse.Options) {
				o.Request.System = systemPrompt(1500)
				o.Cache = &converse.CachePolicy{}
				o.Stream = streamIf(tt.stream)
				o.OnEvent = func(ev converse.Event) {
					if _, ok := ev.(converse.TurnEnd); ok {
						events = append(events, ev)
					}
				}
			})
			res, err := c.Send(context.Background(), "Find the records about the harbour.")
			require.NoError(t, err)
			require.Equal(t, 5, res.Turns)

			var sb strings.Builder
			var sum converse.Usage
			for i, req := range srv.Requests() {
				u := turnUsage(t, i+1, events)
				sum = sum.Add(u)
				fmt.Fprintf(&sb, "turn %d: %s\n        input=%d cacheRead=%d cacheWrite=%d\n", i+1, describePoints(req), u.InputTokens, u.CacheReadInputTokens, u.CacheWriteInputTokens)
			}
			fmt.Fprintf(&sb, "sum: input=%d cacheRead=%d cacheWrite=%d\n", sum.InputTokens, sum.CacheReadInputTokens, sum.CacheWriteInputTokens)
			assert.Equal(t, sum, res.Usage, "Result.Usage sums the turns")

			for _, m := range c.History() {
				for _, b := range m.Content {
					_, isPoint := b.(*types.ContentBlockMemberCachePoint)
					require.False(t, isPoint, "a cache point was kept in the history")
				}
			}
			golden(t, filepath.Join("testdata", "cache-"+tt.golden+".golden"), sb.String())
		})
	}
}

// golden compares got with the file at path, or with -update writes it.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "write it with -update")
	assert.Equal(t, string(want), got)
}
