package recording

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRequestDiff(t *testing.T) {
	const model = "anthropic.claude-3-5-haiku-20241022-v1:0"
	tests := []struct {
		name      string
		wantModel string // model for want; model if empty
		want, got string
		ignore    []string
		diff      []string
	}{
		{
			name: "same",
			want: `{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`,
			got:  `{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`,
		},
		{
			name: "key order and spacing do not matter",
			want: `{"inferenceConfig":{"maxTokens":100,"temperature":0.5},"messages":[]}`,
			got:  "{ \"messages\": [],\n \"inferenceConfig\": {\"temperature\": 0.50, \"maxTokens\": 1e2} }",
		},
		{
			name:      "model",
			wantModel: "other-model",
			want:      `{}`, got: `{}`,
			diff: []string{`modelId: want "other-model", got "` + model + `"`},
		},
		{
			name: "changed value",
			want: `{"messages":[{"role":"user","content":[{"text":"What time is it?"}]}]}`,
			got:  `{"messages":[{"role":"user","content":[{"text":"What time?"}]}]}`,
			diff: []string{`messages[0].content[0].text: want "What time is it?", got "What time?"`},
		},
		{
			name: "missing and extra keys",
			want: `{"system":[{"text":"Be brief."}],"messages":[]}`,
			got:  `{"messages":[],"toolConfig":{"tools":[]}}`,
			diff: []string{
				`system: want [{"text":"Be brief."}], got nothing`,
				`toolConfig: want nothing, got {"tools":[]}`,
			},
		},
		{
			name: "array lengths",
			want: `{"messages":[{"role":"user"},{"role":"assistant"}]}`,
			got:  `{"messages":[{"role":"user"},{"role":"assistant"},{"role":"user"}]}`,
			diff: []string{`messages[2]: want nothing, got {"role":"user"}`},
		},
		{
			name: "type change and odd key",
			want: `{"toolConfig":{"tools":[{"toolSpec":{"inputSchema":{"json":{"properties":{"time zone":{"type":"string"}}}}}}]},"n":1}`,
			got:  `{"toolConfig":{"tools":[{"toolSpec":{"inputSchema":{"json":{"properties":{"time zone":["string"]}}}}}]},"n":"1"}`,
			diff: []string{
				`n: want 1, got "1"`,
				`toolConfig.tools[0].toolSpec.inputSchema.json.properties["time zone"]: want {"type":"string"}, got ["string"]`,
			},
		},
		{
			name: "long values are cut",
			want: `{"t":"` + strings.Repeat("a", 100) + `"}`,
			got:  `{"t":"b"}`,
			diff: []string{`t: want "` + strings.Repeat("a", 58) + `…, got "b"`},
		},
		{
			name: "whole bodies",
			want: `{}`, got: `[]`,
			diff: []string{`body: want {}, got []`},
		},
		{
			name: "not JSON",
			want: `{}`, got: `{"messages":`,
			diff: []string{`body: the request body is not JSON: unexpected EOF`},
		},
		{
			name: "at most ten lines",
			want: `{"a":[1,2,3,4,5,6,7,8,9,10,11,12]}`,
			got:  `{"a":[0,0,0,0,0,0,0,0,0,0,0,0]}`,
			diff: []string{
				"a[0]: want 1, got 0", "a[1]: want 2, got 0", "a[2]: want 3, got 0",
				"a[3]: want 4, got 0", "a[4]: want 5, got 0", "a[5]: want 6, got 0",
				"a[6]: want 7, got 0", "a[7]: want 8, got 0", "a[8]: want 9, got 0",
				"… and 3 more differences",
			},
		},
		{
			name:   "ignored tool result",
			want:   replayToolBody("get_current_datetime", "2025-01-01T10:00:00Z", "ok"),
			got:    replayToolBody("get_current_datetime", "2025-06-30T17:42:09Z", "ok"),
			ignore: []string{"get_current_datetime"},
		},
		{
			name:   "ignored tool result still compares its id",
			want:   replayToolBody("get_current_datetime", "2025-01-01T10:00:00Z", "ok"),
			got:    strings.Replace(replayToolBody("get_current_datetime", "later", "ok"), `"toolUseId":"tu1"}}]},{"role":"user"`, `"toolUseId":"tu1"}}]},{"role":"user"`, 1),
			ignore: []string{"get_current_datetime"},
		},
		{
			name:   "other tools are compared",
			want:   replayToolBody("calculator", "20", "ok"),
			got:    replayToolBody("calculator", "21", "ok"),
			ignore: []string{"get_current_datetime"},
			diff:   []string{`messages[2].content[0].toolResult.content[0].text: want "20", got "21"`},
		},
		{
			name: "tool results compared without the option",
			want: replayToolBody("get_current_datetime", "10:00", "ok"),
			got:  replayToolBody("get_current_datetime", "11:00", "ok"),
			diff: []string{`messages[2].content[0].toolResult.content[0].text: want "10:00", got "11:00"`},
		},
		{
			name:   "a toolUse in a user message does not count",
			want:   `{"messages":[{"role":"user","content":[{"toolUse":{"toolUseId":"x","name":"clock"}},{"toolResult":{"toolUseId":"x","content":[{"text":"1"}]}}]}]}`,
			got:    `{"messages":[{"role":"user","content":[{"toolUse":{"toolUseId":"x","name":"clock"}},{"toolResult":{"toolUseId":"x","content":[{"text":"2"}]}}]}]}`,
			ignore: []string{"clock"},
			diff:   []string{`messages[0].content[1].toolResult.content[0].text: want "1", got "2"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantModel := tt.wantModel
			if wantModel == "" {
				wantModel = model
			}
			ignore := make(map[string]bool)
			for _, n := range tt.ignore {
				ignore[n] = true
			}
			got := requestDiff(wantModel, []byte(tt.want), model, []byte(tt.got), ignore)
			if len(got) == 0 && len(tt.diff) == 0 {
				return // nil and empty are the same diff
			}
			assert.Equal(t, tt.diff, got, "diff")
		})
	}
}

// replayToolBody is a request body in which the assistant called tool and
// the user answered with result.
func replayToolBody(tool, result, status string) string {
	return `{"messages":[` +
		`{"role":"user","content":[{"text":"Go"}]},` +
		`{"role":"assistant","content":[{"toolUse":{"toolUseId":"tu1","name":"` + tool + `","input":{}}}]},` +
		`{"role":"user","content":[{"toolResult":{"toolUseId":"tu1","content":[{"text":"` + result + `"}],"status":"` + status + `"}}]}` +
		`]}`
}
