package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

func TestStrict(t *testing.T) {
	strict := func(o *tools.Options) { o.Strict = true }
	noop := func(context.Context, struct{}) (int, error) { return 0, nil }
	raw := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	made := map[string]func(opts ...func(*tools.Options)) (*tools.Tool, error){
		"New": func(opts ...func(*tools.Options)) (*tools.Tool, error) {
			return tools.New("calc", "Computes.", noop, opts...)
		},
		"NewRaw": func(opts ...func(*tools.Options)) (*tools.Tool, error) {
			return tools.NewRaw("calc", "Computes.", json.RawMessage(`{"type":"object"}`), raw, opts...)
		},
	}
	for name, make := range made {
		t.Run(name, func(t *testing.T) {
			tool, err := make(strict)
			require.NoError(t, err)
			assert.True(t, tool.Strict())
			plain, err := make()
			require.NoError(t, err)
			assert.False(t, plain.Strict())
		})
	}
}
