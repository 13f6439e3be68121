package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// calculations is a script of n calculator calls and an answer.
func calculations(n int) bedrocktest.Handler {
	var replies []*bedrocktest.Reply
	for i := 1; i <= n; i++ {
		replies = append(replies, bedrocktest.ToolUse("", bedrocktest.Call{ID: fmt.Sprint("tooluse_", i), Name: "calculator", Input: map[string]any{"expression": fmt.Sprintf("%d + %d", i, i)}}))
	}
	return bedrocktest.Script(append(replies, bedrocktest.Text("Done."))...)
}

func TestCacheFlag(t *testing.T) {
	srv := bedrocktest.NewServer(calculations(2), func(o *bedrocktest.Options) { o.Accounting = true })
	t.Cleanup(srv.Close)
	system := strings.Repeat("You answer with care. ", 800) // over the 4,096 tokens taken for the default model's minimum
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-cache", "-json", "-v", "-system", system, "Add up some numbers.")
	require.Equal(t, 0, out.code, out.stderr)
	mustContain(t, "the -v trace", out.stderr, "written to it", "read from the cache")
	mustContain(t, "the -json object", out.stdout, `"cacheReadInputTokens":`, `"cacheWriteInputTokens":`)
	for _, req := range srv.Requests() {
		assert.Contains(t, string(req.Body), `"cachePoint"`)
	}

	plain := bedrocktest.NewServer(calculations(1))
	t.Cleanup(plain.Close)
	out = runInProcess(t, nil, "-endpoint", plain.URL, "-system", system, "Add up some numbers.")
	require.Equal(t, 0, out.code, out.stderr)
	for _, req := range plain.Requests() {
		assert.NotContains(t, string(req.Body), `"cachePoint"`, "no cache points without -cache")
	}
}

// tooLongPast answers Bedrock's overflow error to requests of more than n
// messages, as a model with a small context window would.
func tooLongPast(n int, h bedrocktest.Handler) bedrocktest.Handler {
	return bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		if len(req.Messages) > n {
			return nil, bedrocktest.Validation("Input is too long for requested model.")
		}
		return h.ServeConverse(ctx, req)
	})
}

func TestTrimByDefault(t *testing.T) {
	srv := newServer(t, tooLongPast(5, calculations(3)))
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-v", "Add up some numbers.")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Contains(t, out.stdout, "Done.")
	// How much is dropped is the policy's business (converse's context
	// tests pin it); here: the overflow was trimmed, retried and said so.
	assert.Regexp(t, `the input was too long for the model; trimmed the history and retried: [1-9][0-9]* messages dropped`, out.stderr)

	srv = newServer(t, tooLongPast(5, calculations(3)))
	out = runInProcess(t, nil, "-endpoint", srv.URL, "-no-trim", "Add up some numbers.")
	assert.Equal(t, exitCaller, out.code)
	mustContain(t, "stderr", out.stderr, "Input is too long for requested model.", "outgrew the context window", "leave out -no-trim")
}

// TestTrimBeforeOverflow: with the context window known (-context-tokens here;
// the model's table by default), the history is trimmed before a request would
// outgrow it. So no request overflows, where without it every trim costs a
// rejected request.
func TestTrimBeforeOverflow(t *testing.T) {
	const window = 1500
	srv := bedrocktest.NewServer(calculations(20), func(o *bedrocktest.Options) { o.MaxInputTokens, o.Accounting = window, true })
	t.Cleanup(srv.Close)
	out := runInProcess(t, nil, "-endpoint", srv.URL, "-v", "-max-turns", "30", "-context-tokens", fmt.Sprint(window), "Add up some numbers.")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Contains(t, out.stderr, "trimmed the history to fit the context window")
	assert.NotContains(t, out.stderr, "the input was too long for the model")
	for i, req := range srv.Requests() {
		assert.LessOrEqual(t, bedrocktest.EstimateTokens(req), window, "request %d overflows", i+1)
	}

	srv = bedrocktest.NewServer(calculations(20), func(o *bedrocktest.Options) { o.MaxInputTokens, o.Accounting = window, true })
	t.Cleanup(srv.Close)
	out = runInProcess(t, nil, "-endpoint", srv.URL, "-v", "-max-turns", "30", "Add up some numbers.")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Contains(t, out.stderr, "the input was too long for the model", "the default model's window is larger than the server's")
}
