package converse_test

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/tools"
)

func TestToolConfig(t *testing.T) {
	reg, err := tools.NewRegistry(tools.Builtins()...)
	require.NoError(t, err)

	cfg, err := (&converse.Executor{Registry: reg}).ToolConfig(nil)
	require.NoError(t, err)
	require.Len(t, cfg.Tools, 2)
	assert.Nil(t, cfg.ToolChoice)
	var names []string
	for i, tool := range cfg.Tools {
		spec := tool.(*types.ToolMemberToolSpec).Value
		names = append(names, aws.ToString(spec.Name))
		assert.Equal(t, reg.Tools()[i].Description(), aws.ToString(spec.Description))
		doc := spec.InputSchema.(*types.ToolInputSchemaMemberJson).Value
		b, err := doc.MarshalSmithyDocument()
		require.NoError(t, err)
		assert.JSONEq(t, string(reg.Tools()[i].InputSchema()), string(b))
		var schema map[string]any
		require.NoError(t, json.Unmarshal(b, &schema))
		assert.Equal(t, "object", schema["type"])
	}
	assert.Equal(t, []string{"get_current_datetime", "calculator"}, names)

	for _, choice := range []types.ToolChoice{
		&types.ToolChoiceMemberAuto{}, &types.ToolChoiceMemberAny{},
		&types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("calculator")}},
	} {
		cfg, err := (&converse.Executor{Registry: reg}).ToolConfig(choice)
		require.NoError(t, err)
		assert.Equal(t, choice, cfg.ToolChoice)
	}

	_, err = (&converse.Executor{Registry: reg}).ToolConfig(&types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String("weather")}})
	assert.ErrorContains(t, err, `"weather", which is not in the registry`)

	cfg, err = (&converse.Executor{Registry: nil}).ToolConfig(nil)
	assert.NoError(t, err)
	assert.Nil(t, cfg, "no tools, no toolConfig")
	cfg, err = (&converse.Executor{Registry: &tools.Registry{}}).ToolConfig(nil)
	assert.NoError(t, err)
	assert.Nil(t, cfg)
}
