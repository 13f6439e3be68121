package converse_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
)

// FuzzExecute feeds arbitrary tool names, ids and inputs to the executor and
// checks that it never panics and answers every toolUse, by id, in order.
func FuzzExecute(f *testing.F) {
	f.Add("add", "id1", `{"a":1,"b":2}`, "fail", "id1")
	f.Add("nope", "x.y:0", `[1,2]`, "panic", "")
	f.Add("echo", "", `"text"`, "add", "id2")
	f.Add("add", "id", `{"a":"1e999"}`, "echo", "id")
	f.Add("", "\x00", `{`, "nan", "\xff")
	reg := testTools(f, nil)
	f.Fuzz(func(t *testing.T, name1, id1, input, name2, id2 string) {
		var v any
		if err := json.Unmarshal([]byte(input), &v); err != nil {
			v = input // not JSON: send it as a string
		}
		content := []types.ContentBlock{
			&types.ContentBlockMemberText{Value: "calling"},
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String(id1), Name: aws.String(name1), Input: document.NewLazyDocument(v)}},
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String(id2), Name: aws.String(name2), Input: document.NewLazyDocument(v)}},
		}
		e := &converse.Executor{Registry: reg, ToolOptions: converse.ToolOptions{Timeout: 100 * time.Millisecond}}
		out := e.Execute(context.Background(), content)
		require.Len(t, out, 2, "results for 2 calls")
		for i, id := range []string{id1, id2} {
			tr, ok := out[i].(*types.ContentBlockMemberToolResult)
			require.True(t, ok, "result %d is %T", i, out[i])
			require.Equal(t, id, aws.ToString(tr.Value.ToolUseId), "result %d answers", i)
			txt := tr.Value.Content[0].(*types.ToolResultContentBlockMemberText).Value
			require.NotEmpty(t, strings.TrimSpace(txt), "result %d is blank", i)
			if tr.Value.Status == types.ToolResultStatusError {
				require.True(t, strings.HasPrefix(txt, "Error: "), "error result %d does not start with Error: %q", i, txt)
			}
		}
	})
}
