package converse_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/tools"
)

// A tool learns from its context which toolUseId it answers, so that it can
// pass it on (lambdatool sends it to the function).
func TestExecuteTellsToolsTheirCallID(t *testing.T) {
	id := func(ctx context.Context, _ struct{}) (string, error) { return tools.CallID(ctx), nil }
	plain, err := tools.New("plain", "Says its call id.", id)
	require.NoError(t, err)
	quick, err := tools.New("quick", "Says its call id.", id)
	require.NoError(t, err)
	reg, err := tools.NewRegistry(plain, quick)
	require.NoError(t, err)
	e := &converse.Executor{Registry: reg}
	got := results(t, e.Execute(context.Background(), []types.ContentBlock{
		toolUse("tooluse_a", "plain", map[string]any{}),
		toolUse("tooluse_b", "quick", map[string]any{}),
		toolUse("tooluse_c", "plain", map[string]any{}),
	}))
	require.Len(t, got, 3)
	for i, want := range []string{"tooluse_a", "tooluse_b", "tooluse_c"} {
		assert.Equal(t, want, got[i].ID)
		assert.Equal(t, `"`+want+`"`, got[i].Text)
	}
}
