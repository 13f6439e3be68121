package temporal_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPublicAPIOnly: no file of the module imports an internal package of
// the core module, which its users' builds would refuse (only the replace
// directive of this repository lets one through).
func TestPublicAPIOnly(t *testing.T) {
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			assert.False(t, strings.HasPrefix(p, "github.com/tooluse/bedrock/") && strings.Contains(p+"/", "/internal/"),
				"%s imports %s", path, p)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Positive(t, files)
}
