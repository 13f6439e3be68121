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

// TestInvocationBodyLimit: a body of more than 1 MiB is read, as
// InvokeAgentRuntime takes up to 100 MB, and one of more than 100 MiB is
// refused with 413.
func TestInvocationBodyLimit(t *testing.T) {
	bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("A long one.")))
	defer bed.Close()
	f := serve(t, bed, registry(t), t.TempDir())
	a := f.call(session, `{"prompt": "`+strings.Repeat("a", 2<<20)+`"}`, http.StatusOK)
	assert.Equal(t, "A long one.", a.Response)

	// Served in process, with a body made as it is read: no 100 MiB in
	// memory, none on a socket.
	h := agentcore.New(bed.Client(), model, registry(t), func(o *agentcore.Options) { o.Store = filestore.Store{Dir: t.TempDir()} })
	body := io.MultiReader(strings.NewReader(`{"prompt": "`), io.LimitReader(repeat('a'), 100<<20), strings.NewReader(`"}`))
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/invocations", body)
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "answer: %s", w.Body)
	var big answer
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &big))
	assert.Contains(t, big.Error, "larger than 104857600 bytes")
	assert.Len(t, bed.Requests(), 1, "no model call for the body too large")
}

// repeat is an endless reader of b.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
