package tools

import (
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// anyJSON returns the schema of a value that takes any JSON. It lists the
// types rather than being {} because jsonschema-go makes the schema of a
// pointer to a TypeSchemas type by adding "null" to its types, which would
// turn {} into null only.
func anyJSON() *jsonschema.Schema {
	return &jsonschema.Schema{Types: []string{"null", "boolean", "number", "string", "array", "object"}}
}

// inferSchema infers the input schema of a tool taking In, as encoding/json
// decodes In. jsonschema-go infers the schemas of plain types; inferSchema
// gives it, as TypeSchemas, the schemas of the types that decode specially
// and of every struct type In uses, built from the fields encoding/json
// sees.
func inferSchema[In any]() (*jsonschema.Schema, error) {
	t := reflect.TypeFor[In]()
	inf := &inferrer{schemas: map[reflect.Type]*jsonschema.Schema{}, state: map[reflect.Type]visitState{}}
	if root := deref(t); root.Kind() == reflect.Struct && specialSchema(root) != nil {
		// The whole input decodes by the struct's own method: its fields
		// are the best account of what that takes, and a tool's input
		// must be an object.
		s, err := inf.structSchema(root)
		if err != nil {
			return nil, err
		}
		inf.schemas[root], inf.state[root] = s, visited
	}
	if err := inf.visit(t); err != nil {
		return nil, err
	}
	return jsonschema.ForType(t, inf.opts())
}

// visitState is how far an inferrer got with a type.
type visitState int

const (
	visiting visitState = iota + 1 // on the walk's path, to detect cycles
	visited
)

// inferrer walks a Go type, collecting in schemas the schemas of the special
// and struct types it uses.
type inferrer struct {
	schemas map[reflect.Type]*jsonschema.Schema
	state   map[reflect.Type]visitState
}

// opts returns options for jsonschema-go with the schemas found so far.
func (inf *inferrer) opts() *jsonschema.ForOptions {
	return &jsonschema.ForOptions{TypeSchemas: inf.schemas}
}

// visit records the schemas of t and of the types t holds: the elements of
// pointers, slices and arrays, the values of maps and the fields of structs.
func (inf *inferrer) visit(t reflect.Type) error {
	t = deref(t)
	switch inf.state[t] {
	case visited:
		return nil
	case visiting:
		return fmt.Errorf("cycle detected for type %v", t)
	}
	inf.state[t] = visiting
	defer func() { inf.state[t] = visited }()
	if t.Kind() == reflect.Interface {
		if t.NumMethod() > 0 {
			return fmt.Errorf("interface type %v cannot be decoded from JSON (use a concrete type, or NewRaw with an explicit schema)", t)
		}
		return nil
	}
	if s := specialSchema(t); s != nil {
		inf.schemas[t] = s
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return inf.visit(t.Elem())
	case reflect.Struct:
		s, err := inf.structSchema(t)
		if err != nil {
			return err
		}
		inf.schemas[t] = s
	}
	return nil
}

// deref returns the type a pointer type points to, through every level.
func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// specialSchema returns the schema of a type that encoding/json does not
// decode by its kind, or nil. Such types are the standard library types
// jsonschema-go knows and a json.Unmarshaler such as json.RawMessage (its
// UnmarshalJSON decides what it takes). So are an encoding.TextUnmarshaler
// (from a string) and a byte slice (from base64 text).
func specialSchema(t reflect.Type) *jsonschema.Schema {
	implements := func(u reflect.Type) bool { return t.Implements(u) || reflect.PointerTo(t).Implements(u) }
	switch {
	case t == reflect.TypeFor[time.Time](), t == reflect.TypeFor[slog.Level](),
		t == reflect.TypeFor[big.Rat](), t == reflect.TypeFor[big.Float]():
		return &jsonschema.Schema{Type: "string"} // as jsonschema-go has them
	case t == reflect.TypeFor[big.Int]():
		return &jsonschema.Schema{Type: "integer"} // a JSON number, where jsonschema-go says string
	case t == reflect.TypeFor[json.Number]():
		return &jsonschema.Schema{Type: "number"} // where jsonschema-go says string, by its kind
	case implements(reflect.TypeFor[json.Unmarshaler]()):
		return anyJSON()
	case implements(reflect.TypeFor[encoding.TextUnmarshaler]()):
		return &jsonschema.Schema{Type: "string"}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return &jsonschema.Schema{Types: []string{"null", "string"}, ContentEncoding: "base64"}
	}
	return nil
}

// structSchema returns the schema of a struct type: an object with a
// property for each field encoding/json decodes, required unless its json
// tag says omitempty or omitzero, and no other properties.
func (inf *inferrer) structSchema(t reflect.Type) (*jsonschema.Schema, error) {
	s := &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	for _, f := range jsonFields(t) {
		fs, err := inf.fieldSchema(f)
		if err != nil {
			return nil, fmt.Errorf("field %v.%s: %w", t, f.sf.Name, err)
		}
		if s.Properties == nil {
			s.Properties = map[string]*jsonschema.Schema{}
		}
		s.Properties[f.name] = fs
		s.PropertyOrder = append(s.PropertyOrder, f.name)
		if !f.optional {
			s.Required = append(s.Required, f.name)
		}
	}
	return s, nil
}

// fieldSchema returns the schema of a field's value: a string for a field
// with the ",string" option, otherwise its type's, with the description of
// its jsonschema tag.
func (inf *inferrer) fieldSchema(f jsonField) (*jsonschema.Schema, error) {
	var s *jsonschema.Schema
	switch {
	case f.quoted && f.sf.Type.Kind() == reflect.Pointer:
		s = &jsonschema.Schema{Types: []string{"null", "string"}}
	case f.quoted:
		s = &jsonschema.Schema{Type: "string"}
	default:
		if err := inf.visit(f.sf.Type); err != nil {
			return nil, err
		}
		var err error
		if s, err = jsonschema.ForType(f.sf.Type, inf.opts()); err != nil {
			return nil, err
		}
	}
	if tag, ok := f.sf.Tag.Lookup("jsonschema"); ok {
		// jsonschema-go's rule: "WORD=" is reserved for future use.
		word := tag
		if i := strings.IndexAny(tag, " \t\n"); i >= 0 {
			word = tag[:i]
		}
		if tag == "" || strings.Contains(word, "=") {
			return nil, fmt.Errorf("jsonschema tag %q must not be empty or begin with WORD=", tag)
		}
		s.Description = tag
	}
	return s, nil
}

// jsonField is a struct field as encoding/json decodes it.
type jsonField struct {
	sf       reflect.StructField
	name     string // the JSON name
	tagged   bool   // the name comes from a json tag
	index    []int  // the path of field indexes from the struct
	optional bool   // omitempty or omitzero
	quoted   bool   // the ",string" option on a string, number or bool
	// unsettable means the field is, or its path goes through, an embedded
	// pointer to an unexported struct, which encoding/json cannot allocate:
	// it fails, or for a tagged one panics, on any input but null.
	unsettable bool
}

// jsonFields returns the fields of struct type t that encoding/json decodes,
// in field order: a port of encoding/json's typeFields, which also drops the
// unsettable fields.
func jsonFields(t reflect.Type) []jsonField {
	// embedded is a struct whose fields to collect, at the current depth or
	// the next.
	type embedded struct {
		typ        reflect.Type
		index      []int
		unsettable bool
	}
	var fields []jsonField
	next := []embedded{{typ: t}}
	var count, nextCount map[reflect.Type]int // structs queued per depth
	seen := map[reflect.Type]bool{}           // structs collected at a lesser depth
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, e := range current {
			if seen[e.typ] {
				continue
			}
			seen[e.typ] = true
			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTag(name) {
					name = ""
				}
				index := append(slices.Clip(e.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				unsettable := e.unsettable || sf.Anonymous && !sf.IsExported() && sf.Type.Kind() == reflect.Pointer
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					// Promote the fields of an untagged embedded struct.
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, embedded{typ: ft, index: index, unsettable: unsettable})
					}
					continue
				}
				options := strings.Split(opts, ",")
				f := jsonField{
					sf:         sf,
					name:       cmp.Or(name, sf.Name),
					tagged:     name != "",
					index:      index,
					optional:   slices.Contains(options, "omitempty") || slices.Contains(options, "omitzero"),
					quoted:     slices.Contains(options, "string") && quotable(ft.Kind()),
					unsettable: unsettable,
				}
				fields = append(fields, f)
				if count[e.typ] > 1 {
					// The struct is embedded more than once at this depth:
					// a second copy makes its fields conflict below.
					fields = append(fields, f)
				}
			}
		}
	}
	return dominantFields(fields)
}

// dominantFields keeps, of the fields of each name, the one that dominates
// the others: the shallowest, and of those the tagged one. If there is no
// single one, encoding/json ignores them all. The result is in field order,
// without unsettable fields.
func dominantFields(fields []jsonField) []jsonField {
	byName := map[string][]jsonField{}
	for _, f := range fields {
		byName[f.name] = append(byName[f.name], f)
	}
	var out []jsonField
	for _, same := range byName {
		slices.SortFunc(same, func(a, b jsonField) int { return cmp.Compare(a.rank(), b.rank()) })
		if len(same) > 1 && same[0].rank() == same[1].rank() {
			continue
		}
		if !same[0].unsettable {
			out = append(out, same[0])
		}
	}
	slices.SortFunc(out, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	return out
}

// rank orders the fields of a name by dominance: shallower first, and at
// the same depth tagged first.
func (f jsonField) rank() int {
	r := 2 * len(f.index)
	if !f.tagged {
		r++
	}
	return r
}

// quotable reports whether encoding/json applies the ",string" option to a
// field of kind k.
func quotable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// validTag reports whether encoding/json takes a json tag's name: letters,
// digits and punctuation other than quotes and backslashes.
func validTag(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}
