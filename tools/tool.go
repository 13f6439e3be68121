package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// namePattern is the tool name rule of the Bedrock Converse API, which
// validName checks.
const namePattern = `^[a-zA-Z0-9_-]{1,64}$`

// validName reports whether name matches namePattern: 1 to 64 ASCII letters,
// digits, underscores and hyphens. A loop, not a regular expression compiled
// when every program starts.
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := range len(name) {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Tool is a function the model can call: a name, a description, a JSON Schema
// for its input (always an object) and the function itself.
//
// Only [New], [NewRaw], [Command] and the built-ins make Tools. A Tool is
// immutable and safe for concurrent use.
type Tool struct {
	name        string
	description string
	schema      json.RawMessage      // the input schema as sent to the model
	resolved    *jsonschema.Resolved // validates each call's input
	run         func(ctx context.Context, input json.RawMessage) (any, error)
	timeout     time.Duration
	speculative bool
	approve     bool
	resumable   bool
	strict      bool
	maxOutput   int   // bytes of output sent to the model; 0: the executor's default
	defaults    bool  // the schema declares a default somewhere (conservatively)
	err         error // why a built-in could not be made; see builtin
}

// New makes a tool whose input schema is inferred from In with
// github.com/google/jsonschema-go: json tags name the properties, omitempty or
// omitzero makes one optional, and a `jsonschema:"..."` tag describes it.
// In must be a struct or a map with string keys. Structs accept no properties
// beyond their fields.
//
// The schema accepts what encoding/json decodes into In. Struct fields follow
// its rules. A tagged embedded struct is one property, and a shallower or
// tagged field hides others of its name. Fields in conflict are left out.
// So are embedded pointers to unexported structs and the fields they
// promote, which encoding/json cannot allocate. A []byte is a base64 string; a ",string"
// field, an [encoding.TextUnmarshaler] and [time.Time] are strings; a
// [math/big.Int] is an integer and a [json.Number] a number; a
// [json.Unmarshaler], such as
// [json.RawMessage], takes any JSON. An In that holds a non-empty interface
// (which decodes only from null), a channel, a function or a recursive type
// is an error wrapping [ErrInvalidTool]: use [NewRaw] with an explicit schema.
//
// Each call checks and validates the input (see [Tool.Call]), decodes it into
// an In, with the schema's defaults filled in, and calls fn. The Out that fn
// returns is the result; it should encode as JSON.
func New[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...func(*Options)) (*Tool, error) {
	if err := checkIdentity(name, description); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, invalid(name, "nil function")
	}
	schema, err := inferSchema[In]()
	if err != nil {
		return nil, invalid(name, "input type: %v", err)
	}
	return newTyped(name, description, schema, fn, opts)
}

// newTyped makes a typed tool from a schema for In that the caller may have
// refined (the built-ins add enums and defaults).
func newTyped[In, Out any](name, description string, schema *jsonschema.Schema, fn func(context.Context, In) (Out, error), opts []func(*Options)) (*Tool, error) {
	run := func(ctx context.Context, input json.RawMessage) (any, error) {
		in, err := decodeInput[In](name, input)
		if err != nil {
			return nil, err
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	o, err := collectPlain(name, opts)
	if err != nil {
		return nil, err
	}
	return build(name, description, schema, nil, run, o)
}

// NewRaw makes a tool from an explicit JSON Schema, for tools defined at run
// time. The schema must declare "type": "object" and be valid against the
// JSON Schema meta-schema: draft 2020-12, or draft-07 if its "$schema" says
// so. An invalid schema (an unknown type, a negative minLength, required not
// an array, ...) is an error wrapping [ErrInvalidTool].
//
// Each call checks and validates the input (see [Tool.Call]) and passes fn the
// input object as JSON, with the schema's defaults filled in.
func NewRaw(name, description string, schema json.RawMessage, fn func(ctx context.Context, input json.RawMessage) (any, error), opts ...func(*Options)) (*Tool, error) {
	if err := checkIdentity(name, description); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, invalid(name, "nil function")
	}
	o, err := collectPlain(name, opts)
	if err != nil {
		return nil, err
	}
	return newRaw(name, description, schema, fn, o)
}

// newRaw makes a tool from a schema's JSON; the caller has checked the name
// and description.
func newRaw(name, description string, schema json.RawMessage, fn func(context.Context, json.RawMessage) (any, error), o Options) (*Tool, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, schema); err != nil {
		return nil, invalid(name, "input schema: %v", err)
	}
	var decoded any
	if err := json.Unmarshal(compact.Bytes(), &decoded); err != nil {
		return nil, invalid(name, "input schema: %v", err)
	}
	if err := checkMetaSchema(name, decoded); err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(compact.Bytes(), &s); err != nil {
		return nil, invalid(name, "input schema: %v", err)
	}
	return build(name, description, &s, compact.Bytes(), fn, o)
}

// build resolves the schema and assembles the tool. raw is the schema's JSON,
// or nil to marshal it from schema.
func build(name, description string, schema *jsonschema.Schema, raw json.RawMessage, run func(context.Context, json.RawMessage) (any, error), o Options) (*Tool, error) {
	if o.Timeout < 0 {
		return nil, invalid(name, "negative timeout %v", o.Timeout)
	}
	if o.MaxOutput < 0 {
		return nil, invalid(name, "negative output limit %d", o.MaxOutput)
	}
	if o.RequireApproval && o.Speculative {
		return nil, invalid(name, "a tool that needs approval cannot be speculative")
	}
	if err := checkObjectSchema(name, schema); err != nil {
		return nil, err
	}
	resolved, err := schema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, invalid(name, "input schema: %v", err)
	}
	if raw == nil {
		if raw, err = json.Marshal(schema); err != nil {
			return nil, invalid(name, "input schema: %v", err)
		}
	}
	t := &Tool{
		name:        name,
		description: description,
		schema:      raw,
		resolved:    resolved,
		run:         run,
		timeout:     o.Timeout,
		speculative: o.Speculative,
		approve:     o.RequireApproval,
		resumable:   o.Resumable,
		strict:      o.Strict,
		maxOutput:   o.MaxOutput,
		defaults:    hasDefaults(schema),
	}
	return t, nil
}

// hasDefaults reports whether a schema may declare a default: whether its
// JSON, as encoding/json writes it (so without escapes in names), has a
// "default" key, or a property of that name, which only costs a fill.
func hasDefaults(schema *jsonschema.Schema) bool {
	b, err := json.Marshal(schema)
	return err != nil || bytes.Contains(b, []byte(`"default"`))
}

// checkIdentity checks what the Converse API requires of a tool's name and
// description.
func checkIdentity(name, description string) error {
	if !validName(name) {
		return invalid(name, "name must match %s", namePattern)
	}
	if strings.TrimSpace(description) == "" {
		return invalid(name, "empty description")
	}
	return nil
}

// checkObjectSchema insists on "type": "object" itself: a schema that only
// lists properties would also accept arrays and strings.
func checkObjectSchema(name string, s *jsonschema.Schema) error {
	if s.Type != "object" {
		got := s.Type
		if len(s.Types) > 0 {
			got = strings.Join(s.Types, ", ")
		}
		if got == "" {
			got = "none"
		}
		return invalid(name, `input schema: type must be "object", got %s`, got)
	}
	return nil
}

// check re-checks a tool before it is registered, to catch tools that were
// not made by a constructor.
func (t *Tool) check() error {
	if t == nil {
		return fmt.Errorf("%w: nil", ErrInvalidTool)
	}
	if t.err != nil {
		return t.err
	}
	if err := checkIdentity(t.name, t.description); err != nil {
		return err
	}
	if t.resolved == nil || t.run == nil {
		return invalid(t.name, "not made by New, NewRaw or Command")
	}
	return checkObjectSchema(t.name, t.resolved.Schema())
}

// Name returns the tool's name, unique within a [Registry].
func (t *Tool) Name() string { return t.name }

// Description returns the description the model reads to decide when to call
// the tool.
func (t *Tool) Description() string { return t.description }

// InputSchema returns the JSON Schema of the tool's input, an object schema.
// The caller owns the returned copy.
func (t *Tool) InputSchema() json.RawMessage { return bytes.Clone(t.schema) }

// Timeout returns the time a call may take ([Options].Timeout). Zero means
// the executor's default. [Command] tools default to 30 seconds and apply the
// timeout themselves.
func (t *Tool) Timeout() time.Duration { return t.timeout }

// MaxOutput returns the bytes of output a call may send to the model, set
// with [Options].MaxOutput. Zero means the executor's default.
func (t *Tool) MaxOutput() int { return t.maxOutput }

// Speculative reports whether the tool was made with [Options].Speculative: it
// has no side effects and may start before the model's turn is complete.
func (t *Tool) Speculative() bool { return t.speculative }

// RequiresApproval reports whether the tool was made with [Options].RequireApproval: a
// call must be approved before it runs.
func (t *Tool) RequiresApproval() bool { return t.approve }

// Resumable reports whether the tool was made with [Options].Resumable: a
// call cut off by a crash is run again when its conversation resumes.
func (t *Tool) Resumable() bool { return t.resumable }

// Strict reports whether the tool was made with [Options].Strict: the model
// is asked to keep its calls to the input schema.
func (t *Tool) Strict() bool { return t.strict }

// Call runs the tool with the model's input. The input must be a JSON object
// that gives no name twice in an object. For a repeated name,
// encoding/json would read the last, another reader the first. An empty
// input counts as {}, since a model streaming a call without arguments may
// send no input at all. Call fills in the defaults the schema declares and
// validates the input before it runs the function, which is not called if
// the input fails. Input errors are [*InputError] values (wrapping
// [ErrInvalidInput]); other errors come from the function or, for [Command]
// tools, from running the program.
//
// Call does not recover panics in the function, and applies no timeout except
// the one a [Command] tool applies itself.
func (t *Tool) Call(ctx context.Context, input json.RawMessage) (any, error) {
	in, err := t.CheckInput(input)
	if err != nil {
		return nil, err
	}
	return in.Call(ctx)
}

// CheckInput checks input as Call does before it runs the function. It
// returns the input, the schema's defaults filled in, ready to run, or the
// error Call would return: an [*InputError] for input that is not an object
// or fails the schema. A host may check a call before it spends anything on
// it (an approval, a goroutine), then run it without a second check.
func (t *Tool) CheckInput(input json.RawMessage) (Checked, error) {
	if t == nil || t.run == nil {
		if t != nil && t.err != nil {
			return Checked{}, t.err
		}
		return Checked{}, errors.New("tools: call of a tool not made by New, NewRaw or Command")
	}
	obj, err := t.prepare(input)
	if err != nil {
		return Checked{}, err
	}
	return Checked{tool: t, input: obj}, nil
}

// Checked is a call's input that its tool accepted (see Tool.CheckInput).
type Checked struct {
	tool  *Tool
	input json.RawMessage
}

// Input is the input as the function gets it, the schema's defaults filled
// in.
func (c Checked) Input() json.RawMessage { return c.input }

// Call runs the tool's function with the input, as Tool.Call does once it
// checked it. The zero Checked, of no tool, fails.
func (c Checked) Call(ctx context.Context) (any, error) {
	if c.tool == nil {
		return nil, errors.New("tools: call of an input no tool checked")
	}
	return c.tool.run(ctx, c.input)
}
