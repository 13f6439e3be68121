package tools

import (
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// screenSchema returns a copy of schema, for validating inputs that are
// likely valid, in which each additionalProperties: false reads
// {"not": {"$comment": ...}}: a schema that no value matches either. It
// returns nil when schema has no additionalProperties: false.
//
// jsonschema-go reads false as {"not": {}}, and at each object it validates
// against it tells that form apart with reflect.Value.IsZero on the whole
// inner Schema: 65 fields, every one read since all are zero. That was a
// sixth of the validation of a call of two integers, 1% of a loopback
// conversation's cycles (BENCHMARKS.md). With a comment in the inner schema,
// IsZero stops at its fourth field and the object's names are checked
// against its properties as before; an extra name fails in other words,
// which is why a failing input is validated again against the schema as it
// was given (see validate): the words of its errors are that one's.
func screenSchema(schema *jsonschema.Schema) *jsonschema.Schema {
	screen, changed := schema.CloneSchemas(), false
	eachSchema(screen, func(s *jsonschema.Schema) {
		if falsy(s.AdditionalProperties) {
			s.AdditionalProperties.Not = &jsonschema.Schema{Comment: "matches every value, so that not matches none: additionalProperties false"}
			changed = true
		}
	})
	if !changed {
		return nil
	}
	return screen
}

// falsy reports whether s has the form jsonschema-go reads false as, and
// tells apart by IsZero: {"not": {}}, other keywords beside it or not.
func falsy(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

var (
	schemaType      = reflect.TypeFor[*jsonschema.Schema]()
	schemaSliceType = reflect.TypeFor[[]*jsonschema.Schema]()
	schemaMapType   = reflect.TypeFor[map[string]*jsonschema.Schema]()
)

// eachSchema calls f with s and each schema under it, by every field of a
// schema type (a field jsonschema-go adds is walked too). A schema met twice
// is visited once.
func eachSchema(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	seen := map[*jsonschema.Schema]bool{}
	var walk func(*jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		f(s)
		v := reflect.ValueOf(s).Elem()
		for i := range v.NumField() {
			switch fv := v.Field(i); fv.Type() {
			case schemaType:
				walk(fv.Interface().(*jsonschema.Schema))
			case schemaSliceType:
				for _, c := range fv.Interface().([]*jsonschema.Schema) {
					walk(c)
				}
			case schemaMapType:
				for _, c := range fv.Interface().(map[string]*jsonschema.Schema) {
					walk(c)
				}
			}
		}
	}
	walk(s)
}
