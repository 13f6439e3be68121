package tools_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tooluse/bedrock/tools"
)

func TestCallID(t *testing.T) {
	ctx := context.Background()
	assert.Empty(t, tools.CallID(ctx), "no id set")
	withID := tools.WithCallID(ctx, "tooluse_1")
	assert.Equal(t, "tooluse_1", tools.CallID(withID))
	assert.Equal(t, "tooluse_2", tools.CallID(tools.WithCallID(withID, "tooluse_2")), "the innermost id wins")
	assert.Empty(t, tools.CallID(ctx), "the parent is unchanged")
}
