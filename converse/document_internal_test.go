package converse

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// decodeAsSDK decodes JSON into the kind of value the SDK's documents hold:
// maps, slices, strings, json.Numbers, bools and nils.
func decodeAsSDK(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

var documentSamples = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-1.5e-7`, `"plain"`,
	`{"b":1,"a":[true,null,{"z":"x","y":-0}],"c":{}}`,
	`{"s":"quote \" backslash \\ tab \t nl \n <html> & \u2028 \u00e9 😀 \u0001"}`,
	`{"é":1,"e":2,"E":3,"":4}`,
	`[1e400, 123456789012345678901234567890]`,
}

func TestAppendJSON(t *testing.T) {
	for _, in := range documentSamples {
		v, err := decodeAsSDK([]byte(in))
		require.NoError(t, err)
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, ok := appendJSON(nil, v, 0)
		require.True(t, ok, in)
		assert.Equal(t, string(want), string(got), in)
	}
	for _, v := range []any{
		json.Number(""), json.Number("1."), json.Number("01"), json.Number("NaN"),
		map[string]any{"a": 1.5}, []string{"a"}, struct{}{},
	} {
		_, ok := appendJSON(nil, v, 0)
		assert.False(t, ok, "%#v should be left to MarshalSmithyDocument", v)
	}
	deep := any(map[string]any{})
	for range maxDocumentDepth + 1 {
		deep = []any{deep}
	}
	_, ok := appendJSON(nil, deep, 0)
	assert.False(t, ok, "too deep")
}

// FuzzAppendJSON holds appendJSON to json.Marshal's bytes.
func FuzzAppendJSON(f *testing.F) {
	for _, in := range documentSamples {
		f.Add([]byte(in))
	}
	f.Add([]byte("\"invalid \xff utf-8\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeAsSDK(data)
		if err != nil {
			return
		}
		want, err := json.Marshal(v)
		got, ok := appendJSON(nil, v, 0)
		if err != nil || !ok {
			if ok {
				t.Fatalf("json.Marshal fails (%v) but appendJSON writes %s", err, got)
			}
			return
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("appendJSON wrote %s, json.Marshal %s", got, want)
		}
	})
}

// TestDocumentJSONReadsTheSDKsValue checks that the tool inputs the SDK
// decodes still give out their value, so that documentJSON writes them
// without reflection, and that it writes what MarshalSmithyDocument would.
func TestDocumentJSONReadsTheSDKsValue(t *testing.T) {
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.ToolUse("",
		bedrocktest.Call{ID: "t1", Name: "add", Input: map[string]any{"b": 2, "a": "<x> & é", "c": []any{1.5, nil, true}}})))
	defer srv.Close()
	out, err := srv.Client().Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId:  aws.String("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "go"}}}},
	})
	require.NoError(t, err)
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	input := msg.Content[0].(*types.ContentBlockMemberToolUse).Value.Input
	v, ok := input.(interface{ Value() any })
	require.True(t, ok, "the SDK's documents no longer have a Value method: documentJSON falls back to MarshalSmithyDocument")
	_, ok = appendJSON(nil, v.Value(), 0)
	assert.True(t, ok, "the SDK's decoded value is not made of the types appendJSON writes: %#v", v.Value())

	want, err := input.MarshalSmithyDocument()
	require.NoError(t, err)
	got, err := documentJSON(input)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}
