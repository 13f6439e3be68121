package agentcore_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/tools"
)

// TestInnerApprovalOverTheContract: a call of an agent used as a tool that
// needs approval pauses the invocation. The invocation answers with the
// call named by its path. The next invocation's decision for the path runs
// it, then the agent and the coordinator go on.
func TestInnerApprovalOverTheContract(t *testing.T) {
	var runs atomic.Int32
	inner := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "add", Input: map[string]any{"a": 1, "b": 2}}),
		bedrocktest.Text("It is 3."),
	))
	defer inner.Close()
	outer := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "o1", Name: "mathematician", Input: map[string]any{"task": "add 1 and 2"}}),
		bedrocktest.Text("The mathematician says 3."),
	))
	defer outer.Close()
	add := adder(t, &runs, func(o *tools.Options) { o.RequireApproval = true })
	mathematician, err := agenttool.New(agenttool.Agent{Name: "mathematician", Description: "Adds.", Client: inner.Client(), Model: model, Tools: registry(t, add)})
	require.NoError(t, err)
	dir := t.TempDir()

	paused := serve(t, outer, registry(t, mathematician), dir).call(session, `{"prompt": "What is 1 + 2?"}`, http.StatusOK)
	assert.Equal(t, "paused", paused.Status)
	require.Len(t, paused.Pending, 1)
	assert.Equal(t, "o1/t1", paused.Pending[0].ID)
	assert.Equal(t, "add", paused.Pending[0].Tool)
	assert.Zero(t, runs.Load())

	// Another Handler, as after a restart, with its own tools.
	mathematician, err = agenttool.New(agenttool.Agent{Name: "mathematician", Description: "Adds.", Client: inner.Client(), Model: model, Tools: registry(t, add)})
	require.NoError(t, err)
	f := serve(t, outer, registry(t, mathematician), dir)
	done := f.call(session, `{"decisions": [{"toolUseId": "o1/t1", "verdict": "approved"}]}`, http.StatusOK)
	assert.Equal(t, "The mathematician says 3.", done.Response)
	assert.EqualValues(t, 1, runs.Load())
	assert.Len(t, inner.Requests(), 2)
}
