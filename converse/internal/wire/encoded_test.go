package wire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingDocument is a lazy document that counts its encodings.
type countingDocument struct {
	document.Interface
	encodings int
	err       error
}

func (d *countingDocument) MarshalSmithyDocument() ([]byte, error) {
	d.encodings++
	if d.err != nil {
		return nil, d.err
	}
	return d.Interface.MarshalSmithyDocument()
}

// TestEncodedIsEncodedOnce sends one tool configuration and one history
// three times through the real client: the bodies are those of the lazy
// documents, which are encoded once each.
func TestEncodedIsEncodedOnce(t *testing.T) {
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, b)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":1}}`)
	}))
	defer srv.Close()
	client := bedrockruntime.New(bedrockruntime.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
		BaseEndpoint: aws.String(srv.URL),
	})
	schema := &countingDocument{Interface: document.NewLazyDocument(map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}})}
	input := &countingDocument{Interface: document.NewLazyDocument(map[string]any{"city": "Paris"})}
	request := func(schema, input document.Interface) *bedrockruntime.ConverseInput {
		return &bedrockruntime.ConverseInput{
			ModelId: aws.String("m"),
			Messages: []types.Message{
				{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Weather?"}}},
				{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String("t1"), Name: aws.String("weather"), Input: input,
				}}}},
				{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
					ToolUseId: aws.String("t1"), Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "sunny"}},
				}}}},
			},
			ToolConfig: &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
				Name: aws.String("weather"), InputSchema: &types.ToolInputSchemaMemberJson{Value: schema},
			}}}},
		}
	}
	ctx := context.Background()
	_, err := client.Converse(ctx, request(schema.Interface, input.Interface))
	require.NoError(t, err)
	encoded := request(Encoded(schema), Encoded(input))
	for range 3 {
		_, err := client.Converse(ctx, encoded)
		require.NoError(t, err)
	}
	require.Len(t, bodies, 4)
	for _, b := range bodies[1:] {
		assert.Equal(t, string(bodies[0]), string(b))
	}
	assert.Contains(t, string(bodies[0]), `"input":{"city":"Paris"}`)
	assert.Equal(t, 1, schema.encodings)
	assert.Equal(t, 1, input.encodings)
}

func TestEncoded(t *testing.T) {
	d := document.NewLazyDocument(map[string]any{"a": 1})
	e := Encoded(d)
	assert.Same(t, e, Encoded(e), "an Encoded document is not encoded again")
	assert.Nil(t, Encoded(nil))

	b, err := e.MarshalSmithyDocument()
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":1}`, string(b))
	b[1] = 'X' // a tool may change the input it is handed
	b, err = e.MarshalSmithyDocument()
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":1}`, string(b), "each caller gets a copy")

	var got, want any
	assert.Equal(t, d.UnmarshalSmithyDocument(&want), e.UnmarshalSmithyDocument(&got), "decoding is the document's")
	assert.Equal(t, want, got)

	failing := &countingDocument{Interface: d, err: errors.New("boom")}
	assert.Same(t, failing, Encoded(failing), "a document that cannot be encoded fails where it would have")
}

// FuzzEncodedJSON holds EncodedJSON to the SDK: JSON it keeps as it is is
// what the SDK's encoder writes for its value, and its document decodes as
// the lazy document of that value does.
func FuzzEncodedJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":7}`, `{"b":{"z":[1,2.50,-3e+07],"a":null},"a":true,"A":false}`, `[]`, `{}`, `"x"`, `null`,
		`{"s":"","h":"<&>\u2028\u00e9\u0001\"\\/\t","u":"é日本"}`, `{"":1}`, `{"a":[{"":1}]}`,
		`[{"k":[[],{}]},"",0,-0.0,1E400]`, `{"\u0000":1,"\u007f":2,"~":3}`,
		`{"a":1,"a":2}`, `{"b":1,"a":2}`, `{"a": 1}`, "{\"a\":\"\u2028\"}", "{\"a\":\"\xff\"}",
		`{"a":{"b":1},"c":[{"d":1,"e":2}]}`, `{"a":"x","b":7}`, `{"a":[1,{"b":2}],"b":-1.5e3}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		v = ExactNumbers(v)
		lazy := document.NewLazyDocument(v)
		want, err := lazy.MarshalSmithyDocument()
		for _, c := range []string{s, string(want)} { // the SDK's own encoding too
			d, ok := EncodedJSON([]byte(c))
			if !ok {
				continue
			}
			require.NoError(t, err, "EncodedJSON kept %s, which the SDK cannot encode", c)
			require.Equal(t, string(want), c, "EncodedJSON kept %s, which the SDK writes otherwise", c)
			got, err := d.MarshalSmithyDocument()
			require.NoError(t, err)
			assert.Equal(t, c, string(got))
			var fromJSON, fromValue any
			var intoJSON, intoValue struct {
				A any `json:"a"`
				B int `json:"b"`
			}
			assert.Equal(t, lazy.UnmarshalSmithyDocument(&fromValue), d.UnmarshalSmithyDocument(&fromJSON))
			assert.Equal(t, fromValue, fromJSON)
			assert.Equal(t, lazy.UnmarshalSmithyDocument(&intoValue) == nil, d.UnmarshalSmithyDocument(&intoJSON) == nil)
			assert.Equal(t, intoValue, intoJSON)
		}
	})
}

// FuzzRestoredKeepsBytes: a call's input and a tool's JSON result are sent
// with the same bytes before and after their history is restored, whichever
// characters their strings hold (encoding/json, which writes the decoded
// documents, escapes some that the SDK's encoder does not).
func FuzzRestoredKeepsBytes(f *testing.F) {
	for _, s := range []string{`{"q":"a<b&c>d"}`, `{"q":"\b\f\n\u0001\u2028"}`, `{"a":[1,2.50,{"b":"<"}],"c":null}`, `{"q":"\\u003c"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v map[string]any
		if dec.Decode(&v) != nil || v == nil {
			return
		}
		live := Encoded(document.NewLazyDocument(ExactNumbers(v)))
		want, err := live.MarshalSmithyDocument()
		if err != nil {
			return // the SDK cannot send it
		}
		b, err := EncodeMessages([]types.Message{
			{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
				ToolUseId: aws.String("t1"), Name: aws.String("n"), Input: live}}}},
			{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: aws.String("t1"), Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberJson{Value: live}}}}}},
		})
		require.NoError(t, err)
		msgs, err := DecodeMessages(b)
		require.NoError(t, err)
		input, err := msgs[0].Content[0].(*types.ContentBlockMemberToolUse).Value.Input.MarshalSmithyDocument()
		require.NoError(t, err)
		assert.Equal(t, string(want), string(input), "a call's input from %s", s)
		result, err := msgs[1].Content[0].(*types.ContentBlockMemberToolResult).Value.Content[0].(*types.ToolResultContentBlockMemberJson).Value.MarshalSmithyDocument()
		require.NoError(t, err)
		assert.Equal(t, string(want), string(result), "a tool's result from %s", s)
	})
}

// TestEncodedJSON: JSON in the SDK's encoding is kept as it is; any other is
// left to the SDK's encoder.
func TestEncodedJSON(t *testing.T) {
	for s, kept := range map[string]bool{
		`{"a":1,"b":7}`: true, `{"city":"Paris","days":[1,2.50],"opts":{"metric":true,"z":null}}`: true,
		`{}`: true, `[]`: true, `"é日本<&>"`: true, `1E400`: true,
		`{"b":7,"a":1}`: false, `{"a":1,"a":2}`: false, `{"":1}`: false, `{"a": 1}`: false, `{"a":"\n"}`: false,
		`{"a":"\u0041"}`: false, "{\"a\":\"\u2028\"}": false, "{\"a\":\"\xff\"}": false, `{"a":1`: false,
		strings.Repeat("[", 17) + strings.Repeat("]", 17): false, strings.Repeat("[", 16) + strings.Repeat("]", 16): true,
	} {
		d, ok := EncodedJSON([]byte(s))
		assert.Equal(t, kept, ok, "%s", s)
		if ok {
			b, err := d.MarshalSmithyDocument()
			require.NoError(t, err)
			assert.Equal(t, s, string(b))
		}
	}
}

// TestDecodeMessagesEncodes: a restored history holds its calls' inputs and
// its tools' JSON results as Encoded documents, as a live one does.
func TestDecodeMessagesEncodes(t *testing.T) {
	b, err := EncodeMessages(history())
	require.NoError(t, err)
	msgs, err := DecodeMessages(b)
	require.NoError(t, err)
	tu := msgs[1].Content[1].(*types.ContentBlockMemberToolUse)
	assert.IsType(t, &encoded{}, tu.Value.Input)
	tr := msgs[2].Content[0].(*types.ContentBlockMemberToolResult)
	assert.IsType(t, &encoded{}, tr.Value.Content[0].(*types.ToolResultContentBlockMemberJson).Value)
}
