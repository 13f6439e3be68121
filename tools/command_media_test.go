//go:build unix

package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

func TestCommandMediaEnvelope(t *testing.T) {
	png := tools.Media{Type: "image/png", Name: "chart", Data: []byte("\x89PNG\r\n\x1a\n")}
	const pngJSON = `{"type": "image/png", "name": "chart", "data": "iVBORw0KGgo="}`
	tests := []struct {
		name, stdout string
		want         any
		err          string
	}{
		{name: "output and media", stdout: `{"output": {"rows": 3}, "$media": [` + pngJSON + `]}`,
			want: tools.Result{Output: json.RawMessage(`{"rows": 3}`), Media: []tools.Media{png}}},
		{name: "media only", stdout: `{"$media": [` + pngJSON + `, {"type": "text/csv", "data": "YSxiCg=="}]}`,
			want: tools.Result{Media: []tools.Media{png, {Type: "text/csv", Data: []byte("a,b\n")}}}},
		{name: "null output", stdout: `{"$media": [], "output": null}`, want: tools.Result{}},
		{name: "another key", stdout: `{"$media": [], "rows": 3}`, want: json.RawMessage(`{"$media": [], "rows": 3}`)},
		{name: "nested", stdout: `{"output": {"$media": []}}`, want: json.RawMessage(`{"output": {"$media": []}}`)},
		{name: "output alone", stdout: `{"output": 1}`, want: json.RawMessage(`{"output": 1}`)},
		{name: "bad base64", stdout: `{"$media": [{"type": "image/png", "data": "not base64!"}]}`,
			err: `the program's $media is not a list of {"type", "name", "data"} objects with base64 data: illegal base64 data at input byte 3`},
		{name: "not a list", stdout: `{"$media": {"type": "image/png"}}`,
			err: `the program's $media is not a list of {"type", "name", "data"} objects with base64 data: a JSON object at its top`},
		{name: "no type", stdout: `{"$media": [{"data": "YQ=="}]}`, err: `the program's $media[0] needs a type and data`},
		{name: "unknown field", stdout: `{"$media": [{"type": "text/plain", "data": "YQ==", "url": "x"}]}`,
			err: `the program's $media is not a list of {"type", "name", "data"} objects with base64 data: unknown field "url"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := command(t, []string{"/bin/sh", "-c", `printf '%s' "$1"`, "sh", tt.stdout})
			out, err := tool.Call(context.Background(), json.RawMessage(`{}`))
			if tt.err != "" {
				require.Error(t, err)
				assert.Equal(t, tt.err, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
		})
	}
}
