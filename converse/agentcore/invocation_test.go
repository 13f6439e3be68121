package agentcore_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
)

// TestInvocationContentTypes: a JSON body is read whatever Content-Type
// callers send JSON with (the AWS SDK for Go's InvokeAgentRuntime sends
// application/octet-stream for an input without ContentType), and a body
// of another type is refused with 415.
func TestInvocationContentTypes(t *testing.T) {
	for _, tc := range []struct {
		contentType string // "" sends none
		status      int
	}{
		{"application/json", http.StatusOK},
		{"application/json; charset=utf-8", http.StatusOK},
		{"application/octet-stream", http.StatusOK},
		{"text/plain; charset=utf-8", http.StatusOK},
		{"", http.StatusOK},
		{"application/xml", http.StatusUnsupportedMediaType},
		{"multipart/form-data; boundary=x", http.StatusUnsupportedMediaType},
		{"not a media type;;", http.StatusUnsupportedMediaType},
	} {
		t.Run(tc.contentType, func(t *testing.T) {
			bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hello.")))
			defer bed.Close()
			f := serve(t, bed, registry(t), t.TempDir())
			req, err := http.NewRequest(http.MethodPost, f.url+"/invocations", strings.NewReader(`{"prompt": "Hi"}`))
			require.NoError(t, err)
			req.Header.Set(agentcore.SessionHeader, session)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var a answer
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
			require.Equal(t, tc.status, resp.StatusCode, "answer: %+v", a)
			if tc.status == http.StatusOK {
				assert.Equal(t, "Hello.", a.Response)
			} else {
				assert.Contains(t, a.Error, "want application/json")
				assert.Empty(t, bed.Requests(), "no model was called")
			}
		})
	}
}

// TestInvocationBodyLimit: a body of more than Options.MaxBody bytes
// (DefaultMaxBody, 1 MiB, by default) is refused with 413, read no further
// than the limit; a larger MaxBody takes it.
func TestInvocationBodyLimit(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("A long one.")))
	defer bed.Close()
	long := `{"prompt": "` + strings.Repeat("a", 2<<20) + `"}`
	f := serve(t, bed, registry(t), t.TempDir())
	refused := f.call(session, long, http.StatusRequestEntityTooLarge)
	assert.Contains(t, refused.Error, "larger than 1048576 bytes")
	assert.Empty(t, bed.Requests(), "no model call for the body too large")

	roomy := serve(t, bed, registry(t), t.TempDir(), func(o *agentcore.Options) { o.MaxBody = 4 << 20 })
	assert.Equal(t, "A long one.", roomy.call(session, long, http.StatusOK).Response)

	// Served in process, with an endless body made as it is read: the
	// Handler stops reading at the limit.
	h := agentcore.New(bed.Client(), model, registry(t), func(o *agentcore.Options) { o.Store = filestore.Store{Dir: t.TempDir()} })
	var read countingReader
	read.r = io.MultiReader(strings.NewReader(`{"prompt": "`), repeat('a'))
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/invocations", &read)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "answer: %s", w.Body)
	assert.LessOrEqual(t, read.n, int64(agentcore.DefaultMaxBody+64<<10), "read no further than the limit and a buffer")
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// repeat is an endless reader of b.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
