package converse_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSurface keeps the package small enough for a newcomer to change: at
// most 100 exported names (each constant, variable, function and type, as
// go doc -all lists them), 20 fields of Options and 50 methods of
// *Conversation, exported or not. A capability that does not fit lives in a package of its
// own, adding at most one settings field to Options.
func TestSurface(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/tooluse/bedrock/converse")
	require.NoError(t, err)
	exported := len(p.Funcs) + values(p.Consts) + values(p.Vars)
	methods := map[string]int{}
	fields := map[string]int{}
	for _, ty := range p.Types {
		exported += 1 + len(ty.Funcs) + values(ty.Consts) + values(ty.Vars)
		methods[ty.Name] = len(ty.Methods)
		if st, ok := ty.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType); ok {
			for _, f := range st.Fields.List {
				fields[ty.Name] += max(len(f.Names), 1)
			}
		}
	}
	assert.LessOrEqual(t, exported, 100, "exported names")
	assert.LessOrEqual(t, fields["Options"], 20, "fields of Options")
	assert.LessOrEqual(t, methods["Conversation"], 50, "exported methods of *Conversation")
	assert.LessOrEqual(t, allMethods(files, "Conversation"), 50, "methods of *Conversation, unexported ones too")
}

// allMethods counts the methods of *recv that files declare.
func allMethods(files []*ast.File, recv string) int {
	n := 0
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && id.Name == recv {
					n++
				}
			}
		}
	}
	return n
}

// values counts the names a group of constants or variables declares.
func values(vs []*doc.Value) int {
	n := 0
	for _, v := range vs {
		n += len(v.Names)
	}
	return n
}
