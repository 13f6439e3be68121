package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

func TestManifestLambdaFields(t *testing.T) {
	fns := newFunctions(&settings{region: "us-east-1"}, io.Discard)
	tests := []struct {
		name, tool, want string
		fns              *functions
	}{
		{"both command and lambda", `"command": ["ls"], "lambda": "resize"`, `tool 1 ("t"): both "command" and "lambda"`, fns},
		{"qualifier without lambda", `"command": ["ls"], "qualifier": "live"`, `"qualifier" without "lambda"`, fns},
		{"env for a function", `"lambda": "resize", "env": {"A": "b"}`, `"env" and "inheritEnv" are for "command" tools`, fns},
		{"neither", `"timeout": "5s"`, `empty command: want "command": ["/path/to/program", "arg", ...] (or "lambda": "function name or ARN")`, fns},
		{"bad timeout", `"lambda": "resize", "timeout": "soon"`, `timeout "soon"`, fns},
		{"no AWS configuration", `"lambda": "resize"`, `"lambda" tools need the AWS configuration`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseManifest([]byte(`{"tools": [{"name": "t", "description": "T.", `+tt.tool+`}]}`), t.TempDir(), nil, tt.fns)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	ts, err := parseManifest([]byte(`{"tools": [{"name": "resize_image", "description": "Resizes.", "lambda": "resize", "qualifier": "live", "timeout": "45s"}]}`), t.TempDir(), nil, fns)
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Equal(t, "resize_image", ts[0].Name())
	assert.Equal(t, "45s", ts[0].Timeout().String())
}

// A manifest tool that names a function is invoked through the CLI's AWS
// configuration; AWS_ENDPOINT_URL_LAMBDA, read by the SDK's config loader,
// aims it at a local Lambda (here a stub of the Invoke API). With tracing
// on, the function gets the call's traceparent in its ClientContext.
func TestManifestLambdaTool(t *testing.T) {
	t.Parallel()
	for _, tracing := range []bool{false, true} {
		t.Run("tracing="+strconv.FormatBool(tracing), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got []*http.Request
			var bodies []string
			lambdaSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				got, bodies = append(got, r.Clone(r.Context())), append(bodies, string(body))
				mu.Unlock()
				io.WriteString(w, `{"width": 640, "url": "s3://b/small.png"}`)
			}))
			t.Cleanup(lambdaSrv.Close)
			manifest := writeManifest(t, `{"tools": [{"name": "resize_image", "description": "Resizes an image.",
			"inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
			"lambda": "resize", "qualifier": "live", "timeout": "30s"}]}`)
			srv := newServer(t, bedrocktest.Script(
				bedrocktest.ToolUse("", bedrocktest.Call{ID: "tooluse_r1", Name: "resize_image", Input: map[string]any{"url": "s3://b/big.png"}}),
				bedrocktest.Text("Resized."),
			))
			env := testEnv(t, "AWS_ENDPOINT_URL_LAMBDA="+lambdaSrv.URL)
			var rcv *otlpReceiver
			if tracing {
				rcv = newOTLPReceiver(t)
				env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
			}
			out := runBinary(t, env, nil, "-endpoint", srv.URL, "-tools", manifest, "-no-builtins", "resize it")
			require.Equal(t, 0, out.code, out.stderr)
			assert.Contains(t, out.stdout, "Resized.")

			mu.Lock()
			defer mu.Unlock()
			require.Len(t, got, 1)
			r := got[0]
			assert.Equal(t, "/2015-03-31/functions/resize/invocations", r.URL.Path)
			assert.Equal(t, "live", r.URL.Query().Get("Qualifier"))
			assert.Equal(t, "RequestResponse", r.Header.Get("X-Amz-Invocation-Type"))
			assert.Contains(t, r.Header.Get("Authorization"), "Credential="+fakeKeyID+"/", "signed with the CLI's credentials")
			assert.JSONEq(t, `{"url": "s3://b/big.png"}`, bodies[0])
			cc, err := base64.StdEncoding.DecodeString(r.Header.Get("X-Amz-Client-Context"))
			require.NoError(t, err)
			var clientContext struct{ Custom map[string]string }
			require.NoError(t, json.Unmarshal(cc, &clientContext))
			assert.Equal(t, "tooluse_r1", clientContext.Custom["toolUseId"])
			assert.Equal(t, "resize_image", clientContext.Custom["bedrockAgentCoreToolName"])
			if !tracing {
				assert.NotContains(t, clientContext.Custom, "traceparent")
			} else {
				spans, _ := rcv.spans()
				call := spans["execute_tool resize_image"]
				require.Len(t, call, 1)
				assert.Equal(t, fmt.Sprintf("00-%x-%x-01", call[0].TraceId, call[0].SpanId), clientContext.Custom["traceparent"],
					"the function's parent is the call's span")
			}

			result := resultText(toolResults(t, srv.Requests()[1])["tooluse_r1"])
			assert.JSONEq(t, `{"width": 640, "url": "s3://b/small.png"}`, result)
		})
	}
}
