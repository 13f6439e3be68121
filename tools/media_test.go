package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

func TestTypedToolReturnsResult(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n")
	tool, err := tools.New("chart", "Draws a chart.",
		func(_ context.Context, in struct {
			Title string `json:"title"`
		}) (tools.Result, error) {
			return tools.Result{
				Output: map[string]string{"title": in.Title},
				Media:  []tools.Media{{Type: "image/png", Name: "chart", Data: png}},
			}, nil
		})
	require.NoError(t, err)
	out, err := tool.Call(context.Background(), json.RawMessage(`{"title":"sales"}`))
	require.NoError(t, err)
	res, ok := out.(tools.Result)
	require.True(t, ok, "the executor sees a tools.Result, got %T", out)
	assert.Equal(t, map[string]string{"title": "sales"}, res.Output)
	require.Len(t, res.Media, 1)
	assert.Equal(t, tools.Media{Type: "image/png", Name: "chart", Data: png}, res.Media[0])
}
