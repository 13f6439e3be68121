package main

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestLoopbackCredentials: with -endpoint on loopback, the requests are signed
// only when credentials are asked for by name. Those are AWS_ACCESS_KEY_ID,
// AWS_PROFILE, -profile, or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK,
// sent as a bearer token over HTTPS only. -v says which. The EC2 metadata
// service is never asked, even where nothing disables it.
func TestLoopbackCredentials(t *testing.T) {
	t.Parallel()
	var imdsCalls atomic.Int32
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		imdsCalls.Add(1)
		http.NotFound(w, nil)
	}))
	t.Cleanup(imds.Close)
	t.Cleanup(func() { // after the parallel subtests
		assert.Zero(t, imdsCalls.Load(), "requests to the metadata service")
	})

	// A default profile with keys, which a local server must not get
	// unless asked for, and a named profile without any.
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".aws"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "credentials"),
		[]byte("[default]\naws_access_key_id = "+fakeKeyID+"\naws_secret_access_key = "+fakeSecret+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".aws", "config"), []byte("[profile empty]\nregion = eu-west-1\n"), 0o600))
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL}

	const (
		unsigned = "· auth: none: the requests to the local endpoint are unsigned"
		apiKey   = "· auth: a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK)"
		bearer   = "Bearer " + fakeAPIKey
	)
	withKey := func(env ...string) []string { return append(env, "AWS_BEARER_TOKEN_BEDROCK="+fakeAPIKey) }
	keys := []string{"AWS_ACCESS_KEY_ID=" + fakeKeyID, "AWS_SECRET_ACCESS_KEY=" + fakeSecret}
	tests := []struct {
		name  string
		env   []string
		args  []string
		https bool
		auth  string // the Authorization header, up to its first space, or a bearer token
		trace string // the -v line
	}{
		{"nothing asked for", nil, nil, false, "", unsigned},
		{"a profile without credentials", []string{"AWS_PROFILE=empty"}, nil, false, "", unsigned},
		{"-profile without credentials", nil, []string{"-profile", "empty"}, false, "", unsigned},
		{"-profile default", nil, []string{"-profile", "default"}, false, "AWS4-HMAC-SHA256", "· auth: AWS credentials (SigV4) from SharedConfigCredentials: "},
		{"keys in the environment", keys, nil, false, "AWS4-HMAC-SHA256", "· auth: AWS credentials (SigV4) from EnvConfigCredentials"},
		{"a Bedrock API key", withKey(), nil, true, bearer, apiKey},
		{"a Bedrock API key beside keys", withKey(keys...), nil, true, bearer, apiKey},
		{"a Bedrock API key over http", withKey(keys...), nil, false, "", unsigned + " (a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK is sent over HTTPS only)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
			var auth atomic.Value
			auth.Store("")
			target, err := url.Parse(srv.URL)
			require.NoError(t, err)
			proxy := httputil.NewSingleHostReverseProxy(target)
			front := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
					auth.Store(h)
				} else {
					scheme, _, _ := strings.Cut(h, " ")
					auth.Store(scheme)
				}
				proxy.ServeHTTP(w, r)
			}))
			env := append(base, tt.env...)
			if tt.https {
				front.StartTLS()
				bundle := filepath.Join(t.TempDir(), "ca.pem")
				require.NoError(t, os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: front.Certificate().Raw}), 0o600))
				env = append(env, "AWS_CA_BUNDLE="+bundle)
			} else {
				front.Start()
			}
			t.Cleanup(front.Close)

			args := append(append([]string{"-endpoint", front.URL, "-v"}, tt.args...), "hi")
			out := runBinary(t, env, nil, args...)
			require.Equal(t, 0, out.code, out.stderr)
			assert.Equal(t, "Hi.\n", out.stdout)
			assert.Equal(t, tt.auth, auth.Load(), "Authorization")
			mustContain(t, "stderr", out.stderr, tt.trace)
			assert.NotContains(t, out.stderr, fakeAPIKey)
		})
	}
}
