package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quickSchemas are the schemas the quick check is held to, each with inputs
// it must accept (so that it is used at all) and inputs it must leave to the
// full path. FuzzQuickCheck starts from the same inputs.
var quickSchemas = []struct {
	name    string
	schema  string
	accept  []string
	decline []string
}{
	{
		name:   "inferred struct",
		schema: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`,
		accept: []string{`{"a":1,"b":7}`, ` { "b" : -7 , "a" : 0 } `, `{"a":1e2,"b":2.0}`, `{"a":1,"b":2,"a":3}`, `{"a":123456789012345678901234567890,"b":0}`, `{"\u0061":1,"b":2}`},
		decline: []string{
			`{"a":1}`, `{"a":1,"b":2,"c":3}`, `{"a":1.5,"b":2}`, `{"a":"1","b":2}`, `{"a":null,"b":2}`,
			`{"a":1,"b":2`, `{"a":1,"b":2}x`, `{"a":01,"b":2}`, `{"a":1,"b":2,}`, `{"a":-,"b":2}`,
			`{"a":1e400,"b":2}`, `[]`, `null`, ``, `{"a":1,"b":"x","a":3}`,
			`{"a":1, "b":2} {}`, `{"A":1,"b":2}`,
		},
	},
	{
		name:    "every scalar kind",
		schema:  `{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number"},"b":{"type":"boolean"},"z":{"type":"null"},"p":{"type":["null","integer"]},"any":true}}`,
		accept:  []string{`{}`, `{"s":"x\n\"y\" \u00e9 é","n":1.25,"b":false,"z":null,"p":null,"any":[1,{"x":"\ud83d\ude00"}]}`, `{"p":3,"n":-0.5e-3,"b":true}`, "{\"s\":\"\xff\"}", `{"other":{"deep":[[[]]]}}`},
		decline: []string{`{"s":1}`, `{"n":"1"}`, `{"b":0}`, `{"z":false}`, `{"p":1.5}`, `{"s":"\x"}`, `{"s":"\u12"}`, "{\"s\":\"a\tb\"}", `{"b":tru}`, `{"n":1.}`, `{"n":.5}`, `{"n":+1}`, `{"n":1e}`},
	},
	{
		name:    "string assertions",
		schema:  `{"type":"object","properties":{"unit":{"type":"string","enum":["celsius","fahrenheit"]},"code":{"type":"string","minLength":2,"maxLength":3,"pattern":"^[a-zé]+$"},"k":{"const":"x"}}}`,
		accept:  []string{`{"unit":"celsius"}`, `{"code":"ab"}`, `{"code":"éé"}`, `{"code":"\u00e9a"}`, `{"unit":"fahr\u0065nheit","k":"x"}`},
		decline: []string{`{"unit":"kelvin"}`, `{"unit":1}`, `{"code":"a"}`, `{"code":"abcd"}`, `{"code":"AB"}`, `{"k":"y"}`, "{\"code\":\"a\xff\"}", `{"unit":{}}`},
	},
	{
		name:    "numbers and arrays",
		schema:  `{"type":"object","properties":{"u":{"type":"integer","minimum":0,"maximum":255},"r":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},"e":{"enum":[1,"one",true,null]},"l":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2}}}`,
		accept:  []string{`{"u":0,"r":0.5,"e":1.0,"l":["a"]}`, `{"u":255,"e":"one"}`, `{"e":true}`, `{"e":null}`, `{"l":["a","b"]}`},
		decline: []string{`{"u":-1}`, `{"u":256}`, `{"r":0}`, `{"r":1}`, `{"e":2}`, `{"e":false}`, `{"e":[1]}`, `{"l":[]}`, `{"l":["a","b","c"]}`, `{"l":[1]}`, `{"l":["a",]}`, `{"l":"a"}`},
	},
	{
		name:    "maps and nesting",
		schema:  `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"number"}},"i":{"type":["null","object"],"properties":{"x":{"type":"string"}},"required":["x"],"additionalProperties":false}},"required":["i","y"]}`,
		accept:  []string{`{"i":{"x":"a"},"y":0}`, `{"i":null,"y":{},"m":{"a":1,"b":2.5}}`},
		decline: []string{`{"i":{"x":"a"}}`, `{"i":{},"y":0}`, `{"i":{"x":"a","z":1},"y":0}`, `{"i":null,"y":0,"m":{"a":"1"}}`, `{"i":[],"y":0}`},
	},
	{
		name:    "required property not declared",
		schema:  `{"type":"object","required":["x"],"additionalProperties":false}`,
		decline: []string{`{"x":1}`, `{}`},
	},
}

// fullPathValid is what the full path decides: the input decodes into a
// JSON object and jsonschema-go finds it valid.
func fullPathValid(t testing.TB, resolved *jsonschema.Resolved, input []byte) bool {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(input, &m); err != nil || m == nil {
		return false
	}
	return resolved.Validate(m) == nil
}

func compileForTest(t testing.TB, schema string) (*quickSchema, *jsonschema.Resolved) {
	t.Helper()
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal([]byte(schema), &s))
	resolved, err := s.Resolve(nil)
	require.NoError(t, err)
	q := compileQuick(json.RawMessage(schema))
	require.NotNil(t, q, "the schema should compile")
	return q, resolved
}

func TestQuickCheck(t *testing.T) {
	for _, tt := range quickSchemas {
		t.Run(tt.name, func(t *testing.T) {
			q, resolved := compileForTest(t, tt.schema)
			for _, in := range tt.accept {
				assert.True(t, q.accepts([]byte(in)), "should accept %s", in)
				assert.True(t, fullPathValid(t, resolved, []byte(in)), "the full path rejects %s", in)
			}
			for _, in := range tt.decline {
				assert.False(t, q.accepts([]byte(in)), "should leave %s to the full path", in)
			}
		})
	}
}

// TestQuickCheckNotCompiled lists schemas the quick check must not take on:
// keywords it does not implement, anywhere in the schema.
func TestQuickCheckNotCompiled(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"type":"integer","default":1}}}`,
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"integer"},{"type":"string"}]}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}`,
		`{"type":"object","properties":{"a":{"type":"array","items":[{"type":"string"}]}}}`,
		`{"type":"object","properties":{"a":{"type":"string","format":"date"}}}`,
		`{"type":"object","properties":{"a":{"type":"number","multipleOf":2}}}`,
		`{"type":"object","patternProperties":{"^x":{"type":"string"}}}`,
		`{"type":"object","minProperties":1}`,
		`{"type":"object","properties":{"a":{"enum":[[1],{"x":1}]}}}`,
		`{"type":"object","properties":{"a":{"type":"decimal"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","pattern":"(?<=x)"}}}`,
		`{"type":"object","x-custom":1}`,
	} {
		assert.Nil(t, compileQuick(json.RawMessage(schema)), schema)
	}
}

// TestQuickCheckUsed checks that the tools users make get the quick check.
func TestQuickCheckUsed(t *testing.T) {
	type inner struct {
		X string `json:"x"`
	}
	type args struct {
		A  int               `json:"a"`
		P  *int              `json:"p,omitempty"`
		S  []string          `json:"s"`
		M  map[string]string `json:"m,omitempty"`
		I  inner             `json:"i"`
		IP *inner            `json:"ip"`
		U  uint8             `json:"u" jsonschema:"a small number"`
		V  any               `json:"v"`
	}
	tool, err := New("typed", "A typed tool.", func(_ context.Context, in args) (int, error) { return in.A, nil })
	require.NoError(t, err)
	require.NotNil(t, tool.quick)
	assert.True(t, tool.quick.accepts([]byte(`{"a":1,"s":null,"i":{"x":""},"ip":null,"u":2,"v":[]}`)))

	sum, err := NewRaw("sum", "Sums.", json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"xs":{"type":"array","items":{"type":"number"}}}}`),
		func(context.Context, json.RawMessage) (any, error) { return 0, nil })
	require.NoError(t, err)
	assert.NotNil(t, sum.quick)

	assert.Nil(t, Calculator().quick, "a schema with defaults takes the full path")
}

// FuzzQuickCheck holds the quick check to its promise: whatever it accepts,
// the full path accepts too.
func FuzzQuickCheck(f *testing.F) {
	for i, tt := range quickSchemas {
		for _, in := range append(append([]string{}, tt.accept...), tt.decline...) {
			f.Add(uint8(i), []byte(in))
		}
	}
	type compiled struct {
		q        *quickSchema
		resolved *jsonschema.Resolved
	}
	schemas := make([]compiled, len(quickSchemas))
	for i, tt := range quickSchemas {
		q, resolved := compileForTest(f, tt.schema)
		schemas[i] = compiled{q, resolved}
	}
	f.Fuzz(func(t *testing.T, i uint8, input []byte) {
		s := schemas[int(i)%len(schemas)]
		if s.q.accepts(input) && !fullPathValid(t, s.resolved, input) {
			t.Fatalf("the quick check accepts %q, the full path does not", input)
		}
	})
}

// FuzzQuickCheckSchema varies the schema as well as the input: whatever
// schema jsonschema-go accepts, the quick check compiled from it accepts
// only inputs the full path accepts.
func FuzzQuickCheckSchema(f *testing.F) {
	for _, tt := range quickSchemas {
		for _, in := range append(append([]string{}, tt.accept...), tt.decline...) {
			f.Add([]byte(tt.schema), []byte(in))
		}
	}
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string","const":"x"}},"required":["a","a"]}`), []byte(`{"a":"x"}`))
	f.Add([]byte(`{"type":"object","additionalProperties":{"enum":[null,0,""]}}`), []byte(`{"a":null,"b":-0,"c":""}`))
	f.Fuzz(func(t *testing.T, schema, input []byte) {
		var s jsonschema.Schema
		if json.Unmarshal(schema, &s) != nil {
			return
		}
		resolved, err := s.Resolve(nil)
		if err != nil {
			return
		}
		read, err := json.Marshal(resolved.Schema())
		if err != nil {
			return
		}
		q := compileQuick(read)
		if q != nil && q.accepts(input) && !fullPathValid(t, resolved, input) {
			t.Fatalf("schema %s: the quick check accepts %q, the full path does not", read, input)
		}
	})
}
