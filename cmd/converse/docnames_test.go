package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocNames: every Go name that README.md and BENCHMARKS.md write in
// backquotes exists in the module's code (a benchmark or test among them),
// and so does every flag that README.md and the help topics name.
// BENCHMARKS.md's flags are go test's. A renamed field, flag or benchmark
// then fails here, not in a reader's build.
func TestDocNames(t *testing.T) {
	t.Parallel()
	api := loadAPI(t)
	flags := cliFlags(t)
	for _, doc := range []string{"README.md", "BENCHMARKS.md"} {
		text, err := os.ReadFile("../../" + doc)
		require.NoError(t, err)
		for _, span := range backquoted(string(text)) {
			for _, ref := range goRefs(span) {
				assert.True(t, api.resolves(ref), "%s names `%s`, which the code does not have", doc, strings.Join(ref, "."))
			}
			if doc != "README.md" {
				continue
			}
			for _, f := range flagRefs(span) {
				assert.True(t, flags[f], "README.md names the flag -%s, which converse does not have", f)
			}
		}
	}
	for _, tp := range helpTopics {
		for _, f := range flagRefs(helpText(tp.name)) {
			assert.True(t, flags[f], "converse help %s names the flag -%s, which converse does not have", tp.name, f)
		}
	}
}

// TestDocNamesCatchesStaleNames: the check fails on a name the code lacks,
// so that TestDocNames passing means something.
func TestDocNamesCatchesStaleNames(t *testing.T) {
	t.Parallel()
	api := loadAPI(t)
	for _, good := range []string{"converse.Options.Tools.Timeout", "Options.Budget", "converse.ErrMaxTurns",
		"tools.Options.RequireApproval", "Executor.Abandoned", "mcptools.Server.Progress", "*converse.PausedError", "ExampleStructured", "TurnPlan.Offered", "Tools.Concurrency"} {
		refs := goRefs(good)
		require.Len(t, refs, 1, good)
		assert.True(t, api.resolves(refs[0]), good)
	}
	for _, stale := range []string{"converse.Options.Tools.Timeot", "Options.NoSuchField", "converse.ErrNoSuch",
		"tools.Options.Approve", "Executor.Abandon", "mcptools.Server.Progres", "ErrNoSuchThing", "ExampleNoSuch", "TurnPlan.Tools", "Turn.Answered"} {
		refs := goRefs(stale)
		require.Len(t, refs, 1, stale)
		assert.False(t, api.resolves(refs[0]), stale)
	}
	assert.Equal(t, []string{"max-turns", "session"}, flagRefs("-max-turns, or `-session FILE`; not read-only or 2026-07-28"))
}

// externalNames are types of other modules that the docs name with a
// field, such as Lambda's ClientContext.Custom.
var externalNames = map[string]bool{"ClientContext": true}

// externalFlags are flags of other programs that the docs name: npx -y,
// go test -race, docker build -t, rm -rf.
var externalFlags = map[string]bool{"y": true, "race": true, "t": true, "tags": true, "run": true, "count": true, "rf": true}

// backquoted returns the text of each `...` span of markdown, code
// blocks left out (the snippet test compiles those).
func backquoted(md string) []string {
	var spans []string
	inBlock := false
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(line, -1) {
			spans = append(spans, m[1])
		}
	}
	return spans
}

var (
	// goRef is a dotted Go name not preceded by a name's character or a
	// dot, so that "us.anthropic.x" is not read from its middle; type
	// arguments ("Structured[T]") are dropped first.
	goRef     = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])\*?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`)
	typeArgs  = regexp.MustCompile(`\[[A-Z][A-Za-z0-9, ]*\]`)
	exported  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$`)
	loneName  = regexp.MustCompile(`^(Err|Test|Example|Benchmark)[A-Z_]`)
	flagToken = regexp.MustCompile(`(?:^|[\s(,;"'` + "`" + `])-([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\b`)
)

// goRefs returns the names of a span worth checking: those qualified by
// one of the module's packages (converse.X.Y), those starting with an
// exported type or field (Options.X, Tools.Timeout), and a lone sentinel
// error, test or example. A lowercase first word that is no package
// (conv.Send, us.anthropic) is a variable or no Go at all. Other lone
// words (Converse, HealthyBusy) are as often Bedrock's as ours.
func goRefs(span string) [][]string {
	var refs [][]string
	for _, m := range goRef.FindAllStringSubmatch(typeArgs.ReplaceAllString(span, ""), -1) {
		ref := strings.Split(m[1], ".")
		switch {
		case modulePackages[ref[0]] && len(ref) > 1 && exported.MatchString(ref[1]):
			refs = append(refs, ref)
		case exported.MatchString(ref[0]) && len(ref) > 1 && exported.MatchString(ref[1]):
			refs = append(refs, ref)
		case len(ref) == 1 && loneName.MatchString(ref[0]):
			refs = append(refs, ref)
		}
	}
	return refs
}

// flagRefs returns the flags text names: -name after a space, bracket,
// comma or quote, so that read-only and dates are no flags; other
// programs' flags (externalFlags) are left out.
func flagRefs(text string) []string {
	var out []string
	for _, m := range flagToken.FindAllStringSubmatch(text, -1) {
		if !externalFlags[m[1]] {
			out = append(out, m[1])
		}
	}
	return out
}

// cliFlags returns the flags of converse, converse serve and converse
// view, as their -h prints them.
func cliFlags(t *testing.T) map[string]bool {
	t.Helper()
	flags := map[string]bool{"h": true}
	for _, args := range [][]string{{"-h"}, {"serve", "-h"}, {"view", "-h"}, {"eval", "-h"}} {
		var out bytes.Buffer
		_ = run(t.Context(), args, nil, &out, &out) // -h may be a usage "error"
		for _, m := range regexp.MustCompile(`(?m)^\s+-([a-z][a-z0-9-]*)`).FindAllStringSubmatch(out.String(), -1) {
			flags[m[1]] = true
		}
	}
	require.Greater(t, len(flags), 30, "the flags -h printed")
	return flags
}

// modulePackages are the names of the module's packages, which a
// qualified name in the docs starts with.
var modulePackages = map[string]bool{}

// goType is what the docs may name after a type: its fields (with their
// types), embedded types and methods.
type goType struct {
	fields   map[string]ast.Expr
	embedded []ast.Expr
	methods  map[string]bool
}

// goPackage is a package's top-level names and its types.
type goPackage struct {
	names map[string]bool
	types map[string]*goType
}

// moduleAPI is every package of the module, by package name (two
// directories may hold packages of one name).
type moduleAPI map[string][]*goPackage

// loadAPI returns the module's API, parsed once for every test.
func loadAPI(t *testing.T) moduleAPI {
	t.Helper()
	api, err := parseAPI()
	require.NoError(t, err)
	return api
}

// parseAPI parses the non-test files of every package of the checkout,
// the nested module converse/temporal included, and fills modulePackages.
var parseAPI = sync.OnceValues(func() (moduleAPI, error) {
	const root = "../.."
	api := moduleAPI{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if base := d.Name(); path != root && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" || base == "bin") {
			return filepath.SkipDir
		}
		files, tests, err := parseDir(path)
		for name, pkgFiles := range files {
			api[name] = append(api[name], newGoPackage(pkgFiles))
		}
		for _, f := range tests {
			testFuncs(f)
		}
		return err
	})
	for name := range api {
		if name != "main" {
			modulePackages[name] = true
		}
	}
	return api, err
})

// parseDir parses the .go files of dir: the others by package name, and
// the _test.go files apart.
func parseDir(dir string) (files map[string][]*ast.File, tests []*ast.File, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	files = map[string][]*ast.File{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		if strings.HasSuffix(e.Name(), "_test.go") {
			tests = append(tests, f)
			continue
		}
		files[f.Name.Name] = append(files[f.Name.Name], f)
	}
	return files, tests, nil
}

// testNames are the tests, examples and benchmarks of the module, which
// the docs point at as proof.
var testNames = map[string]bool{}

// testFuncs adds the test functions of a _test.go file to testNames.
func testFuncs(f *ast.File) {
	for _, decl := range f.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil && loneName.MatchString(fd.Name.Name) {
			testNames[fd.Name.Name] = true
		}
	}
}

// newGoPackage indexes the files of a package.
func newGoPackage(files []*ast.File) *goPackage {
	gp := &goPackage{names: map[string]bool{}, types: map[string]*goType{}}
	typ := func(name string) *goType {
		if gp.types[name] == nil {
			gp.types[name] = &goType{fields: map[string]ast.Expr{}, methods: map[string]bool{}}
		}
		return gp.types[name]
	}
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					gp.names[d.Name.Name] = true
				} else if recv := typeName(d.Recv.List[0].Type); recv != "" {
					typ(recv).methods[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						gp.names[s.Name.Name] = true
						indexType(typ(s.Name.Name), s.Type)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							gp.names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return gp
}

// indexType records the fields, embedded types and interface methods of
// a type's definition.
func indexType(gt *goType, expr ast.Expr) {
	switch e := expr.(type) {
	case *ast.StructType:
		for _, f := range e.Fields.List {
			if len(f.Names) == 0 {
				gt.embedded = append(gt.embedded, f.Type)
			}
			for _, n := range f.Names {
				gt.fields[n.Name] = f.Type
			}
		}
	case *ast.InterfaceType:
		for _, m := range e.Methods.List {
			for _, n := range m.Names {
				gt.methods[n.Name] = true
			}
		}
	}
}

// typeName is the name of the named type expr refers to, through
// pointers, slices, maps' values and type arguments ("" for a func or
// struct literal); a qualified one keeps its package: "tools.Options".
func typeName(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return typeName(e.X)
	case *ast.ArrayType:
		return typeName(e.Elt)
	case *ast.MapType:
		return typeName(e.Value)
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			return x.Name + "." + e.Sel.Name
		}
	}
	return ""
}

// resolves reports whether the module has the name ref spells: pkg.Name
// or pkg.Type.Field..., Type.Field... or Field.Field... in some package,
// or a lone sentinel or test. A first word the module has nowhere must be
// in externalNames.
func (api moduleAPI) resolves(ref []string) bool {
	if len(ref) == 1 {
		return testNames[ref[0]] || api.hasName(ref[0])
	}
	if modulePackages[ref[0]] {
		for _, p := range api[ref[0]] {
			if p.names[ref[1]] && (len(ref) == 2 || api.member(p, ref[1], ref[2:], 0)) {
				return true
			}
		}
		return false
	}
	known := false
	for _, pkgs := range api {
		for _, p := range pkgs {
			if p.types[ref[0]] != nil {
				known = true
				if api.member(p, ref[0], ref[1:], 0) {
					return true
				}
			}
			for _, gt := range p.types {
				if field := gt.fields[ref[0]]; field != nil {
					known = true
					if api.follow(p, typeName(field), ref[1:], 0) {
						return true
					}
				}
			}
		}
	}
	return !known && externalNames[ref[0]]
}

// hasName reports whether some package of the module declares name.
func (api moduleAPI) hasName(name string) bool {
	for _, pkgs := range api {
		for _, p := range pkgs {
			if p.names[name] {
				return true
			}
		}
	}
	return false
}

// member reports whether type typ of p has the field or method path[0],
// itself with the rest of path, promoted fields included. A field of a
// type from outside the module ends the check: it is the SDK's to have.
func (api moduleAPI) member(p *goPackage, typ string, path []string, depth int) bool {
	gt := p.types[typ]
	if gt == nil || depth > 8 {
		return false
	}
	if gt.methods[path[0]] {
		return len(path) == 1
	}
	if field := gt.fields[path[0]]; field != nil {
		return len(path) == 1 || api.follow(p, typeName(field), path[1:], depth)
	}
	for _, e := range gt.embedded {
		name := typeName(e)
		if pkg, _, ok := strings.Cut(name, "."); ok && !modulePackages[pkg] {
			continue // the SDK's type: its fields are not checked
		}
		if name == path[0] || strings.HasSuffix(name, "."+path[0]) {
			return len(path) == 1 || api.follow(p, name, path[1:], depth)
		}
		if api.follow(p, name, path, depth) {
			return true
		}
	}
	return false
}

// follow continues member's walk in the type named name, which may be
// qualified by another package.
func (api moduleAPI) follow(p *goPackage, name string, path []string, depth int) bool {
	pkg, typ, qualified := strings.Cut(name, ".")
	if !qualified {
		return api.member(p, name, path, depth+1)
	}
	if !modulePackages[pkg] {
		return true
	}
	for _, q := range api[pkg] {
		if api.member(q, typ, path, depth+1) {
			return true
		}
	}
	return false
}
