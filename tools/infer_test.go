package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/netip"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

// inferEcho makes a typed tool whose result is its decoded input.
func inferEcho[In any]() (*tools.Tool, error) {
	return tools.New("echo", "Echoes its input.", func(_ context.Context, in In) (In, error) { return in, nil })
}

// Types embedded by the cases of TestInferredSchemaMatchesDecoding.
type (
	inferInner struct {
		X int `json:"x"`
	}
	inferNamed struct {
		Name int `json:"name"`
	}
	inferUntagged struct{ Name string }
	inferTagged   struct {
		N int `json:"Name"`
	}
	inferA      struct{ V string } // untagged: go vet rejects the same tag twice
	inferB      struct{ V int }
	InferLabel  string
	inferTag    string
	inferHidden struct {
		Y int `json:"y"`
	}
	InferPoint struct {
		X int `json:"x"`
	}
)

// inferLevel decodes from "low" or "high" with its own UnmarshalJSON.
type inferLevel int

// UnmarshalJSON decodes "low" as 1 and "high" as 2.
func (l *inferLevel) UnmarshalJSON(data []byte) error {
	switch string(data) {
	case `"low"`:
		*l = 1
	case `"high"`:
		*l = 2
	default:
		return errors.New("want low or high")
	}
	return nil
}

// inferAliased is a whole input with its own UnmarshalJSON, which also
// takes "count" for "n".
type inferAliased struct {
	N int `json:"n"`
}

// UnmarshalJSON decodes the fields, taking count for n.
func (a *inferAliased) UnmarshalJSON(data []byte) error {
	var v struct {
		N     int `json:"n"`
		Count int `json:"count"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	a.N = max(v.N, v.Count)
	return nil
}

// inferCase is a tool's input type: the inputs encoding/json decodes into it
// and what they decode to, and inputs the schema rejects.
type inferCase struct {
	name   string
	tool   func() (*tools.Tool, error) // inferEcho of the input type
	accept map[string]any              // input: the value the function gets
	reject []string                    // inputs that fail validation
}

// inferCases are the input types whose schema jsonschema-go alone infers
// differently from what encoding/json decodes, and some it gets right.
func inferCases() []inferCase {
	type quoted struct {
		N int   `json:"n,string"`
		B *bool `json:"b,string,omitempty" jsonschema:"a flag"`
	}
	type raw struct {
		Payload json.RawMessage  `json:"payload"`
		Opt     *json.RawMessage `json:"opt,omitempty"`
	}
	type bytes struct {
		Data []byte `json:"data"`
	}
	type text struct {
		Addr netip.Addr  `json:"addr"`
		Opt  *netip.Addr `json:"opt"`
	}
	type number struct {
		Amount json.Number `json:"amount"`
	}
	type unmarshaler struct {
		Level inferLevel `json:"level"`
		Big   *big.Int   `json:"big"`
		When  time.Time  `json:"when"`
	}
	type taggedEmbedded struct {
		inferInner `json:"inner"`
	}
	type shadowed struct {
		Foo string `json:"name"`
		inferNamed
	}
	type taggedWins struct {
		inferUntagged
		inferTagged
	}
	type conflict struct {
		inferA
		inferB
	}
	type nonStruct struct {
		InferLabel
		inferTag // encoding/json skips an unexported embedded non-struct
	}
	type hiddenPointer struct {
		*inferHidden     // encoding/json cannot allocate it: y never decodes
		Z            int `json:"z"`
	}
	type taggedHiddenPointer struct {
		*inferHidden `json:"h"` // encoding/json panics on {"h":{}}
		Z            int        `json:"z"`
	}
	type exportedPointer struct {
		*InferPoint
	}
	type nested struct {
		Hosts map[string][]netip.Addr `json:"hosts"`
	}
	yes := true
	addr := netip.MustParseAddr("10.0.0.1")
	opt := json.RawMessage(`"x"`)
	return []inferCase{
		{"string option", inferEcho[quoted],
			map[string]any{`{"n":"5"}`: quoted{N: 5}, `{"n":"-1","b":"true"}`: quoted{N: -1, B: &yes}},
			[]string{`{"n":5}`, `{"n":"5","b":true}`}},
		{"json.RawMessage", inferEcho[raw],
			map[string]any{
				`{"payload":{"any":"json"}}`:    raw{Payload: json.RawMessage(`{"any":"json"}`)},
				`{"payload":null}`:              raw{Payload: json.RawMessage(`null`)},
				`{"payload":[1,"a"],"opt":"x"}`: raw{Payload: json.RawMessage(`[1,"a"]`), Opt: &opt},
			},
			[]string{`{}`}},
		{"[]byte", inferEcho[bytes],
			map[string]any{`{"data":"aGVsbG8="}`: bytes{Data: []byte("hello")}, `{"data":null}`: bytes{}},
			[]string{`{"data":5}`}},
		{"TextUnmarshaler", inferEcho[text],
			map[string]any{`{"addr":"::1","opt":"10.0.0.1"}`: text{Addr: netip.IPv6Loopback(), Opt: &addr}, `{"addr":"::1","opt":null}`: text{Addr: netip.IPv6Loopback()}},
			[]string{`{"addr":{},"opt":null}`, `{"addr":null,"opt":null}`}},
		{"json.Number", inferEcho[number],
			map[string]any{`{"amount":12.5}`: number{Amount: "12.5"}},
			[]string{`{"amount":true}`}},
		{"json.Unmarshaler", inferEcho[unmarshaler],
			map[string]any{`{"level":"high","big":12345678901234567890,"when":"2024-01-02T03:04:05Z"}`: unmarshaler{
				Level: 2, Big: new(big.Int).SetUint64(12345678901234567890), When: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
			}},
			[]string{`{"level":"high","big":"1","when":"2024-01-02T03:04:05Z"}`, `{"level":"high","big":1,"when":1}`}},
		{"tagged embedded struct", inferEcho[taggedEmbedded],
			map[string]any{`{"inner":{"x":1}}`: taggedEmbedded{inferInner{X: 1}}},
			[]string{`{"x":1}`}},
		{"shallower field wins", inferEcho[shadowed],
			map[string]any{`{"name":"a string"}`: shadowed{Foo: "a string"}},
			[]string{`{"name":1}`}},
		{"tagged field wins", inferEcho[taggedWins],
			map[string]any{`{"Name":1}`: taggedWins{inferTagged: inferTagged{N: 1}}},
			[]string{`{"Name":"a string"}`}},
		{"conflicting fields", inferEcho[conflict],
			map[string]any{`{}`: conflict{}},
			[]string{`{"V":"x"}`, `{"V":1}`}}, // dropped, like any unknown property
		{"embedded non-struct", inferEcho[nonStruct],
			map[string]any{`{"InferLabel":"x"}`: nonStruct{InferLabel: "x", inferTag: ""}},
			[]string{`{}`, `{"InferLabel":"x","inferTag":"y"}`}},
		{"embedded pointer to unexported struct", inferEcho[hiddenPointer],
			map[string]any{`{"z":1}`: hiddenPointer{Z: 1}},
			[]string{`{"y":1,"z":1}`}},
		{"tagged embedded pointer to unexported struct", inferEcho[taggedHiddenPointer],
			map[string]any{`{"z":1}`: taggedHiddenPointer{Z: 1}},
			[]string{`{"h":{},"z":1}`, `{"h":{"y":1},"z":1}`}},
		{"embedded pointer to exported struct", inferEcho[exportedPointer],
			map[string]any{`{"x":1}`: exportedPointer{&InferPoint{X: 1}}},
			[]string{`{}`}},
		{"nested special types", inferEcho[nested],
			map[string]any{`{"hosts":{"a":["10.0.0.1"]}}`: nested{Hosts: map[string][]netip.Addr{"a": {addr}}}},
			[]string{`{"hosts":{"a":[1]}}`}},
		{"a whole input with its own UnmarshalJSON: its fields", inferEcho[inferAliased],
			map[string]any{`{"n":3}`: inferAliased{N: 3}},
			[]string{`{"count":3}`, `{"n":"3"}`}},
		{"map input", inferEcho[map[string]netip.Addr],
			map[string]any{`{"a":"10.0.0.1"}`: map[string]netip.Addr{"a": addr}},
			[]string{`{"a":1}`}},
	}
}

// TestInferredSchemaMatchesDecoding checks that a typed tool's schema accepts
// what encoding/json decodes into its input type, and that the function
// gets the decoded value.
func TestInferredSchemaMatchesDecoding(t *testing.T) {
	for _, c := range inferCases() {
		t.Run(c.name, func(t *testing.T) {
			tool, err := c.tool()
			require.NoError(t, err)
			t.Log(string(tool.InputSchema()))
			for input, want := range c.accept {
				out, err := tool.Call(context.Background(), json.RawMessage(input))
				if assert.NoError(t, err, input) {
					assert.Equal(t, want, out, input)
				}
			}
			for _, input := range c.reject {
				_, err := tool.CheckInput(json.RawMessage(input))
				var ie *tools.InputError
				assert.ErrorAs(t, err, &ie, "validation of %s", input)
			}
		})
	}
}

// TestInferredSchemasAreValid checks that every inferred schema of the table
// passes the meta-schema check of NewRaw, with no property required twice.
func TestInferredSchemasAreValid(t *testing.T) {
	for _, c := range inferCases() {
		tool, err := c.tool()
		require.NoError(t, err, c.name)
		_, err = tools.NewRaw("echo", "Echoes.", tool.InputSchema(),
			func(context.Context, json.RawMessage) (any, error) { return nil, nil })
		assert.NoError(t, err, c.name)
	}
}

// TestNewRejectsUndecodableTypes checks that New refuses an input type with
// a field that no JSON but null decodes into, or that has no schema.
func TestNewRejectsUndecodableTypes(t *testing.T) {
	type reader struct {
		R io.Reader `json:"r"`
	}
	type readers struct {
		Rs map[string][]io.Reader `json:"rs"`
	}
	type nested struct {
		In []reader `json:"in"`
	}
	type node struct {
		Next *node `json:"next"`
	}
	type channel struct {
		C chan int `json:"c"`
	}
	for _, c := range []struct {
		name string
		tool func() (*tools.Tool, error)
		want string
	}{
		{"interface field", inferEcho[reader], "field tools_test.reader.R: interface type io.Reader cannot be decoded from JSON"},
		{"interface element", inferEcho[readers], "field tools_test.readers.Rs: interface type io.Reader"},
		{"nested interface", inferEcho[nested], "field tools_test.nested.In: field tools_test.reader.R: interface type io.Reader"},
		{"cycle", inferEcho[node], "cycle"},
		{"channel", inferEcho[channel], "chan int"},
	} {
		_, err := c.tool()
		assert.ErrorIs(t, err, tools.ErrInvalidTool, c.name)
		assert.ErrorContains(t, err, c.want, c.name)
	}
}

// TestInferredSchemaOfPlainTypes checks that for types encoding/json decodes
// by their kinds, the schema is the one jsonschema-go infers.
func TestInferredSchemaOfPlainTypes(t *testing.T) {
	type leaf struct {
		S string `json:"s,omitempty" jsonschema:"a string"`
	}
	type plain struct {
		leaf
		B    bool              `json:"b"`
		I8   int8              `json:"i8"`
		U    uint              `json:"u,omitzero"`
		F    *float64          `json:"f"`
		L    []leaf            `json:"l"`
		A    [2]int            `json:"a"`
		M    map[string]*leaf  `json:"m"`
		Any  any               `json:"any"`
		When time.Time         `json:"when"`
		Skip string            `json:"-"`
		Rest map[string]string `json:",omitempty"`
	}
	tool, err := inferEcho[plain]()
	require.NoError(t, err)
	want, err := jsonschema.For[plain](nil)
	require.NoError(t, err)
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	assert.JSONEq(t, string(wantJSON), string(tool.InputSchema()))
	assert.Equal(t, string(wantJSON), string(tool.InputSchema()), "property order")
}
