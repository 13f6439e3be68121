package mcptools_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools/mcptools"
)

// checkSigV4 passes a request to next if its signature is the one the SDK's
// v4 signer computes for it with creds, and answers 403 otherwise, as an
// AgentCore Gateway with IAM authorization does. It counts the requests
// it saw and those it let through.
func checkSigV4(creds aws.Credentials, service, region string, seen, passed *atomic.Int32, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		body, err := io.ReadAll(r.Body)
		if err != nil || !signedBy(r, body, creds, service, region) {
			http.Error(w, "The request signature we calculated does not match the signature you provided.", http.StatusForbidden)
			return
		}
		passed.Add(1)
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// signedBy recomputes the signature of r over the headers it says it
// signed, at the time it says it was signed.
func signedBy(r *http.Request, body []byte, creds aws.Credentials, service, region string) bool {
	auth := r.Header.Get("Authorization")
	_, list, ok := strings.Cut(auth, "SignedHeaders=")
	list, _, _ = strings.Cut(list, ",")
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if !ok || err != nil {
		return false
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return false
	}
	for _, h := range strings.Split(list, ";") {
		if h != "host" && h != "content-length" {
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), service, region, when); err != nil {
		return false
	}
	return hmac.Equal([]byte(again.Header.Get("Authorization")), []byte(auth))
}

func TestSigV4(t *testing.T) {
	f := newFixture()
	creds := aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", SessionToken: "session-token"}
	var seen, passed atomic.Int32
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return newTestServer(f, nil) }, nil)
	ts := httptest.NewServer(checkSigV4(creds, "bedrock-agentcore", "us-east-1", &seen, &passed, handler))
	defer ts.Close()
	gateway := func(secret string) mcptools.Server {
		wrong := creds
		wrong.SecretAccessKey = secret
		return mcptools.Server{Name: "gateway", URL: ts.URL + "/mcp", Headers: map[string]string{"X-Team": "tools"},
			HTTPClient: &http.Client{Transport: &mcptools.SigV4{
				Credentials: credentials.StaticCredentialsProvider{Value: wrong},
				Service:     "bedrock-agentcore", Region: "us-east-1", Next: ts.Client().Transport}}}
	}

	t.Run("signed", func(t *testing.T) {
		b, reg := connect(t, gateway(creds.SecretAccessKey))
		for _, text := range []string{"one", "two"} {
			out, err := call(t, reg, "gateway__echo", `{"text":"`+text+`"}`)
			require.NoError(t, err)
			assert.JSONEq(t, `{"echo":"`+text+`"}`, string(out.(json.RawMessage)))
		}
		require.NoError(t, b.Close())
		assert.GreaterOrEqual(t, seen.Load(), int32(4), "the handshake, the listing and the calls")
		assert.Equal(t, seen.Load(), passed.Load(), "every request was signed, the extra header too")
	})

	t.Run("wrong secret", func(t *testing.T) {
		seen.Store(0)
		passed.Store(0)
		b, err := mcptools.Connect(context.Background(), nil, gateway("not-the-secret"))
		require.Error(t, err)
		assert.Nil(t, b)
		assert.Contains(t, err.Error(), `"gateway"`)
		assert.Contains(t, err.Error(), "403 Forbidden")
		assert.NotContains(t, err.Error(), "not-the-secret")
		assert.Positive(t, seen.Load())
		assert.Zero(t, passed.Load())
	})
}

// TestSigV4SignsEachRequestAfresh: a request sent twice (as a retry is) is
// signed each time, over its own body, and the caller's request is left
// as it was.
func TestSigV4SignsEachRequestAfresh(t *testing.T) {
	creds := aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}
	var seen, passed atomic.Int32
	ts := httptest.NewServer(checkSigV4(creds, "execute-api", "eu-west-1", &seen, &passed, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	defer ts.Close()
	client := &http.Client{Transport: &mcptools.SigV4{Credentials: credentials.StaticCredentialsProvider{Value: creds},
		Service: "execute-api", Region: "eu-west-1"}}
	for _, body := range []string{`{"a":1}`, `{"b":2}`} {
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/x?q=1", strings.NewReader(body))
		require.NoError(t, err)
		for range 2 {
			resp, err := client.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Empty(t, req.Header.Get("Authorization"), "the caller's request is not changed")
			req.Body, _ = req.GetBody()
		}
	}
	assert.EqualValues(t, 4, passed.Load())
}
