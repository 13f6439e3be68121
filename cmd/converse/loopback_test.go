package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestLoopbackCredentials: with -endpoint on loopback, the requests are
// signed only when credentials are asked for by name (AWS_ACCESS_KEY_ID,
// AWS_PROFILE, -profile), and the EC2 metadata service is never asked,
// even where nothing disables it.
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

	tests := []struct {
		name   string
		env    []string
		args   []string
		signed bool
	}{
		{"nothing asked for", nil, nil, false},
		{"a profile without credentials", []string{"AWS_PROFILE=empty"}, nil, false},
		{"-profile without credentials", nil, []string{"-profile", "empty"}, false},
		{"-profile default", nil, []string{"-profile", "default"}, true},
		{"keys in the environment", []string{"AWS_ACCESS_KEY_ID=" + fakeKeyID, "AWS_SECRET_ACCESS_KEY=" + fakeSecret}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
			var signed atomic.Int32
			target, err := url.Parse(srv.URL)
			require.NoError(t, err)
			proxy := httputil.NewSingleHostReverseProxy(target)
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "" {
					signed.Add(1)
				}
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)

			args := append(append([]string{"-endpoint", front.URL}, tt.args...), "hi")
			out := runBinary(t, append(base, tt.env...), nil, args...)
			require.Equal(t, 0, out.code, out.stderr)
			assert.Equal(t, "Hi.\n", out.stdout)
			assert.Equal(t, tt.signed, signed.Load() > 0, "signed")
		})
	}
}
