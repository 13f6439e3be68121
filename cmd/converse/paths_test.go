package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// TestFilePathErrors: a -session or -record file whose directory does not
// exist is a usage error found before the first model call. The directory is
// not made. The errors about these files name them once, as the user gave
// them, in one line.
func TestFilePathErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"version": 9}`), 0o600))
	tests := []struct {
		name  string
		args  []string
		want  string
		avoid []string
	}{
		{"session in a missing directory", []string{"-session", filepath.Join(missing, "s.json")},
			"converse: -session " + filepath.Join(missing, "s.json") + ": no directory " + missing + "\n", nil},
		{"record in a missing directory", []string{"-record", filepath.Join(missing, "x.json")},
			"converse: -record " + filepath.Join(missing, "x.json") + ": no such file or directory\n", []string{".x.json."}},
		{"session of another version", []string{"-session", bad},
			"converse: -session " + bad + ": state version 9, ", []string{"converse: load", "converse: state", "-session: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
			out := runInProcess(t, nil, append(append([]string{"-endpoint", srv.URL}, tt.args...), "hi")...)
			assert.Equal(t, 2, out.code, out.stderr)
			assert.Contains(t, out.stderr, tt.want)
			for _, a := range tt.avoid {
				assert.NotContains(t, out.stderr, a)
			}
			assert.Empty(t, srv.Requests(), "model calls")
			assert.NoDirExists(t, missing)
		})
	}
}
