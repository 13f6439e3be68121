package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/smithy-go/logging"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestRedactedOutput: an AWS error that echoes the signed request, session
// token included, reaches neither standard output (-json), standard error
// (the error line and the -v trace) nor the -record file.
func TestRedactedOutput(t *testing.T) {
	t.Parallel()
	const (
		token     = "IQoJb3JpZ2luX2VjEAAaCXVzLWVhc3QtMSJHMEUCIQDconverseTestTokenXYZ0123456789abcdef"
		signature = "4f0a1e0c9b5d7a3e2f1c8b6d5a4e3f2c1b0a9d8e7f6c5b4a3e2d1c0b9a8f7e6d"
	)
	body := "The request signature we calculated does not match the signature you provided.\n\n" +
		"The Canonical String for this request should have been\n'POST\n/model/x/converse\n\n" +
		"host:bedrock-runtime.us-east-1.amazonaws.com\nx-amz-date:20261201T070000Z\n" +
		"x-amz-security-token:" + token + "\n'\n" +
		"Authorization: AWS4-HMAC-SHA256 Credential=" + fakeKeyID + "/20261201/us-east-1/bedrock/aws4_request, " +
		"SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=" + signature
	srv := newServer(t, bedrocktest.Fail(1, &bedrocktest.Error{Status: 403, Type: "InvalidSignatureException", Message: body}, nil))
	file := filepath.Join(t.TempDir(), "chat.json")
	out := runBinary(t, testEnv(t, "AWS_MAX_ATTEMPTS=1"), nil, "-endpoint", srv.URL, "-json", "-v", "-record", file, "hi")
	require.Equal(t, exitCaller, out.code, out.stderr)
	recorded, err := os.ReadFile(file)
	require.NoError(t, err)

	var res jsonResult
	require.NoError(t, json.Unmarshal([]byte(out.stdout), &res), out.stdout)
	assert.Contains(t, res.Error, "InvalidSignatureException", "the -json error still says what failed")
	assert.Contains(t, res.Error, "[REDACTED]")
	mustContain(t, "stderr", out.stderr, "converse: AWS did not accept the credentials (InvalidSignatureException", "[REDACTED]")
	for what, s := range map[string]string{"stdout": out.stdout, "stderr": out.stderr, "the recording": string(recorded)} {
		for _, secret := range []string{token, signature, fakeKeyID, fakeToken, fakeSecret} {
			assert.NotContains(t, s, secret, what)
		}
	}
}

// TestSDKLogRedacted: with -v the AWS SDK's own warnings go through converse's
// standard error, redacted (and made visible on a terminal), not straight to
// the process's. Here the SDK quotes a Date header that holds an access key
// ID. The SDK logs no request, response or signature.
func TestSDKLogRedacted(t *testing.T) {
	t.Parallel()
	srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
	target, err := url.Parse(srv.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		r.Header.Set("Date", "key "+fakeKeyID)
		return nil
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	out := runBinary(t, testEnv(t), nil, "-endpoint", front.URL, "-v", "hi")
	require.Equal(t, 0, out.code, out.stderr)
	mustContain(t, "stderr", out.stderr, "failed to parse response Date header value", "[REDACTED]")
	for _, secret := range []string{fakeKeyID, fakeSecret, fakeToken, "Authorization", "X-Amz-Security-Token", "X-Amz-Signature"} {
		assert.NotContains(t, out.stderr, secret)
	}
}

// TestSDKLogGoesToDiagnostics: the SDK's logger of a -v run writes to the
// CLI's standard error, and there is none without -v.
func TestSDKLogGoesToDiagnostics(t *testing.T) {
	setTestEnv(t)
	for _, verbose := range []bool{true, false} {
		var diag bytes.Buffer
		cfg, err := loadConfig(t.Context(), &settings{verbose: verbose, diagnostics: redacting{&diag}})
		require.NoError(t, err)
		cfg.Logger.Logf(logging.Warn, "echoed %s", fakeKeyID)
		assert.Zero(t, cfg.ClientLogMode, "no request, response or signing log")
		if !verbose {
			assert.Empty(t, diag.String())
			continue
		}
		assert.Contains(t, diag.String(), "WARN echoed [REDACTED]")
	}
}
