package tools_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

func TestApprove(t *testing.T) {
	noop := func(context.Context, struct{}) (int, error) { return 0, nil }
	tool, err := tools.New("send", "Sends.", noop, func(o *tools.Options) { o.RequireApproval = true })
	require.NoError(t, err)
	assert.True(t, tool.RequiresApproval())
	plain, err := tools.New("calc", "Computes.", noop)
	require.NoError(t, err)
	assert.False(t, plain.RequiresApproval())
	_, err = tools.New("both", "Sends early.", noop, func(o *tools.Options) { o.RequireApproval, o.Speculative = true, true })
	require.ErrorIs(t, err, tools.ErrInvalidTool)
	assert.ErrorContains(t, err, "cannot be speculative")
}
