package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/tooluse/bedrock/tools"
)

// defaultToolTimeout bounds a manifest tool's call when it sets no timeout.
const defaultToolTimeout = 30 * time.Second

// manifest is the JSON file of the -tools flag.
type manifest struct {
	Tools []manifestTool `json:"tools"`
}

// manifestTool is a tool that runs a program, invokes a Lambda function or
// delegates to an agent; see the package doc.
type manifestTool struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	InputSchema json.RawMessage   `json:"inputSchema"`
	Command     []string          `json:"command"`
	Timeout     string            `json:"timeout"`
	Env         map[string]string `json:"env"`        // tools.Options.Env
	InheritEnv  []string          `json:"inheritEnv"` // tools.Options.InheritEnv
	Approve     bool              `json:"approve"`    // tools.Options.RequireApproval: asked on the terminal
	Lambda      string            `json:"lambda"`     // a function instead of a command: lambdatool.Function.Name
	Qualifier   string            `json:"qualifier"`  // lambdatool.Function.Qualifier
	Model       string            `json:"model"`      // an agent instead: its model, see agent.go
	System      string            `json:"system"`     // the agent's system prompt
	Tools       []string          `json:"tools"`      // the agent's tools, by name
}

// manifestShape is what a manifest looks like, for its errors.
const manifestShape = `{"tools": [{"name": ..., "description": ..., "inputSchema": ..., "command": [...]}]}`

// loadManifest reads the manifest at path and makes its tools. taken holds
// the names already in use (the built-ins). Every problem is a usageError
// naming the file and, where there is one, the tool.
func loadManifest(path string, taken []string, fns *functions) ([]*tools.Tool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("-tools: %w", err)
	}
	ts, err := parseManifest(data, filepath.Dir(path), taken, fns)
	if err != nil {
		return nil, usagef("manifest %s: %w", path, err)
	}
	return ts, nil
}

// parseManifest makes the tools of a manifest; relative program paths are
// taken from dir, the manifest's directory.
func parseManifest(data []byte, dir string, taken []string, fns *functions) ([]*tools.Tool, error) {
	var m manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field == "" { // such as a bare array of tools
			return nil, fmt.Errorf("%w: a manifest is %s", jsonError(data, err), manifestShape)
		}
		return nil, jsonError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the manifest's JSON object")
	}
	if len(m.Tools) == 0 {
		return nil, errors.New("no tools: want " + manifestShape)
	}
	seen := slices.Clone(taken)
	var out []*tools.Tool
	for i, mt := range m.Tools {
		label := fmt.Sprintf("tool %d (%q)", i+1, mt.Name)
		if slices.Contains(taken, mt.Name) {
			return nil, fmt.Errorf("%s: the name of a built-in tool (rename it, or leave the built-ins out with -no-builtins)", label)
		}
		if slices.Contains(seen, mt.Name) {
			return nil, fmt.Errorf("%s: duplicate name", label)
		}
		seen = append(seen, mt.Name)
		var t *tools.Tool
		var err error
		if mt.isAgent() {
			t, err = mt.agent(out, len(taken) > 0, fns)
		} else {
			t, err = mt.tool(dir, fns)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// tool makes the tools.Command, or the lambdatool tool, of one manifest
// entry.
func (mt manifestTool) tool(dir string, fns *functions) (*tools.Tool, error) {
	if err := mt.checkKind(); err != nil {
		return nil, err
	}
	timeout := defaultToolTimeout
	if mt.Timeout != "" {
		d, err := time.ParseDuration(mt.Timeout)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("timeout %q: want a positive Go duration such as 5s or 1m30s", mt.Timeout)
		}
		timeout = d
	}
	schema := mt.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	var t *tools.Tool
	var err error
	if mt.Lambda != "" {
		t, err = fns.tool(mt, schema, func(o *tools.Options) { o.Timeout, o.RequireApproval = timeout, mt.Approve })
	} else {
		argv := slices.Clone(mt.Command)
		program, perr := findProgram(argv[0], dir)
		if perr != nil {
			return nil, perr
		}
		argv[0] = program
		t, err = tools.Command(mt.Name, mt.Description, schema, argv, func(o *tools.Options) {
			o.Timeout, o.Env, o.InheritEnv, o.RequireApproval = timeout, mt.Env, mt.InheritEnv, mt.Approve
		})
	}
	if err != nil {
		// Drop the packages' own prefixes: the caller names the tool.
		msg := strings.TrimPrefix(err.Error(), fmt.Sprintf("lambdatool: tool %q: ", mt.Name))
		msg = strings.TrimPrefix(msg, fmt.Sprintf("%v %q: ", tools.ErrInvalidTool, mt.Name))
		return nil, errors.New(msg)
	}
	return t, nil
}

// checkKind checks that the entry runs a program or invokes a function,
// with the fields of its kind only.
func (mt manifestTool) checkKind() error {
	switch {
	case mt.Lambda != "" && len(mt.Command) > 0:
		return errors.New(`both "command" and "lambda": a tool runs a program or invokes a function, not both`)
	case mt.Lambda != "" && (len(mt.Env) > 0 || len(mt.InheritEnv) > 0):
		return errors.New(`"env" and "inheritEnv" are for "command" tools: a function has its own environment`)
	case mt.Lambda == "" && mt.Qualifier != "":
		return errors.New(`"qualifier" without "lambda"`)
	case mt.Lambda == "" && (len(mt.Command) == 0 || strings.TrimSpace(mt.Command[0]) == ""):
		return errors.New(`empty command: want "command": ["/path/to/program", "arg", ...] (or "lambda": "function name or ARN")`)
	}
	return nil
}

// findProgram resolves a manifest's program: a name without a slash is
// looked up in PATH, and a relative path is taken from the manifest's
// directory, so that a manifest can sit beside its programs. The path
// returned is absolute: filepath.Join(".", "./prog") is "prog", which
// exec would look up in PATH.
func findProgram(program, dir string) (string, error) {
	if strings.ContainsRune(program, '/') || strings.ContainsRune(program, filepath.Separator) {
		if !filepath.IsAbs(program) {
			abs, err := filepath.Abs(filepath.Join(dir, program))
			if err != nil {
				return "", fmt.Errorf("command %s: %w", program, err)
			}
			program = abs
		}
		if _, err := exec.LookPath(program); err != nil {
			return "", fmt.Errorf("command %s: not an executable file", program)
		}
		return program, nil
	}
	path, err := exec.LookPath(program)
	if err != nil {
		return "", fmt.Errorf("command %s: not found in PATH", program)
	}
	return path, nil
}

// jsonError says where in data a decoding error is, by line.
func jsonError(data []byte, err error) error {
	var offset int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		offset = syn.Offset
	case errors.As(err, &typ):
		// Said in JSON's terms, not Go's ("cannot unmarshal array into
		// Go value of type main.manifest").
		offset = typ.Offset
		err = fmt.Errorf("want %s, got %s", jsonKind(typ.Type), article(typ.Value))
		if typ.Field != "" {
			err = fmt.Errorf("%q: %w", typ.Field, err)
		}
	case errors.Is(err, io.EOF):
		return errors.New("empty file: want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("not valid JSON: unexpected end of file")
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if offset < 0 {
		return errors.New(msg)
	}
	line := 1 + bytes.Count(data[:min(offset, int64(len(data)))], []byte("\n"))
	return fmt.Errorf("line %d: %s", line, msg)
}

// jsonKind is the JSON value that decodes into t, as an error says it.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another value"
}

// article is a JSON kind of encoding/json's errors ("array", "number 5")
// with its article.
func article(kind string) string {
	if strings.HasPrefix(kind, "a") || strings.HasPrefix(kind, "o") {
		return "an " + kind
	}
	return "a " + kind
}
