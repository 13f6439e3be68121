package converse

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

// TestCoverHistory: a request without tools whose history calls some gets
// a toolConfig describing them, each once, as withdrawn; a request with
// tools keeps its own configuration, the very one (shared by every turn).
func TestCoverHistory(t *testing.T) {
	calls := func(names ...string) []types.Message {
		msg := types.Message{Role: types.ConversationRoleAssistant}
		for _, n := range names {
			msg.Content = append(msg.Content, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{Name: aws.String(n), ToolUseId: aws.String(n)}})
		}
		return []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "hi"}}}, msg}
	}
	offered := &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{Name: aws.String("calc")}}}}
	for _, tc := range []struct {
		name    string
		cfg     *types.ToolConfiguration
		history []types.Message
		want    []string // the withdrawn tools; nil: cfg itself
	}{
		{"no tool blocks", nil, calls(), nil},
		{"offered", offered, calls("final_answer", "calc"), nil},
		{"none offered", nil, calls("final_answer", "calc", "final_answer"), []string{"final_answer", "calc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := coverHistory(tc.cfg, tc.history)
			if tc.want == nil {
				assert.Same(t, tc.cfg, got)
				return
			}
			require.NotNil(t, got)
			assert.Nil(t, got.ToolChoice)
			var names []string
			for _, tool := range got.Tools {
				spec := tool.(*types.ToolMemberToolSpec).Value
				names = append(names, aws.ToString(spec.Name))
				assert.Equal(t, withdrawnDescription, aws.ToString(spec.Description))
			}
			assert.Equal(t, tc.want, names)
		})
	}
}

// TestToolSpecsAreShared: conversations offering the same tool share its
// spec, made once; the spec goes when the tool does.
func TestToolSpecsAreShared(t *testing.T) {
	held := func(key weak.Pointer[tools.Tool]) bool {
		_, ok := specs.Load(key)
		return ok
	}
	key := func() weak.Pointer[tools.Tool] {
		tool, err := tools.New("echo", "Echoes.", func(_ context.Context, in struct {
			S string `json:"s"`
		}) (string, error) {
			return in.S, nil
		})
		require.NoError(t, err)
		reg, err := tools.NewRegistry(tool)
		require.NoError(t, err)
		first, err := toolConfig(reg, nil)
		require.NoError(t, err)
		second, err := toolConfig(reg, nil)
		require.NoError(t, err)
		assert.NotSame(t, first, second, "each configuration is the caller's")
		assert.Same(t, first.Tools[0], second.Tools[0], "the spec is made once")
		key := weak.Make(tool)
		assert.True(t, held(key), "the spec is not kept")
		return key
	}()
	// The tool is unreachable now: a collection runs its cleanup, which
	// drops the spec (cleanups run on a goroutine of their own, hence the
	// retries).
	for i := 0; i < 100 && held(key); i++ {
		runtime.GC()
		runtime.Gosched()
	}
	assert.False(t, held(key), "the spec outlived its tool")
}
