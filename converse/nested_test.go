package converse_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// TestResumeRunsResumableCallAgain: a call cut off by a crash is run again,
// with its ID, when its tool is resumable; another is answered as cut off.
func TestResumeRunsResumableCallAgain(t *testing.T) {
	var ran []string
	mk := func(name string, resumable bool) *tools.Tool {
		tool, err := tools.New(name, "Works.", func(ctx context.Context, _ struct{}) (string, error) {
			ran = append(ran, name+" "+tools.CallID(ctx))
			return "went on", nil
		}, func(o *tools.Options) { o.Resumable = resumable })
		require.NoError(t, err)
		return tool
	}
	reg, err := tools.NewRegistry(mk("agent", true), mk("plain", false))
	require.NoError(t, err)
	var st converse.State
	require.NoError(t, json.Unmarshal([]byte(`{"version": 1, "modelId": "`+claude+`", "messages": [
		{"role": "user", "content": [{"text": "go"}]},
		{"role": "assistant", "content": [{"toolUse": {"toolUseId": "a1", "name": "agent", "input": {}}},
			{"toolUse": {"toolUseId": "p1", "name": "plain", "input": {}}}]}],
		"openTurn": {"results": [], "answered": [], "pending": [], "started": true}}`), &st))
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("done")))
	t.Cleanup(srv.Close)
	c, err := converse.Restore(srv.Client(), reg, &st)
	require.NoError(t, err)
	res, err := c.Resume(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"agent a1"}, ran, "the resumable call runs again, with its ID; the other does not")
	got := map[string]types.ToolResultStatus{}
	for _, r := range resultsOf(t, res.History[2]) {
		got[r.ID] = r.Status
	}
	assert.Equal(t, map[string]types.ToolResultStatus{"a1": types.ToolResultStatusSuccess, "p1": types.ToolResultStatusError}, got)
}
