package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// decodeInput decodes a validated input into a typed tool's In.
//
// JSON Schema counts 3.0 and 1e2 as integers, and models write them, but
// encoding/json puts only integer literals into integer fields. When that is
// what failed, the input is decoded again with its integral numbers written
// as integers. Only a failed decode pays for this; a field that keeps a
// number's text (json.Number, json.RawMessage) then sees 3 for 3.0.
func decodeInput[In any](tool string, input json.RawMessage) (In, error) {
	var in In
	err := json.Unmarshal(input, &in)
	if err == nil {
		return in, nil
	}
	if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) && isInteger(te.Type) && strings.HasPrefix(te.Value, "number ") {
		if integral, changed := integralNumbers(input); changed {
			var again In
			if err = json.Unmarshal(integral, &again); err == nil {
				return again, nil
			}
		}
	}
	return in, newInputError(tool, decodeReason(err))
}

// integralNumbers rewrites the numbers of a JSON text that are integers but
// not written as such (3.0, 1e2, 250e-1 is not one) as integer literals, for
// those that fit in 20 digits; larger ones fit no Go integer anyway.
func integralNumbers(data []byte) ([]byte, bool) {
	var out []byte
	last := 0 // data[:last] has been copied to out or needs no change
	for i := 0; i < len(data); {
		switch c := data[i]; {
		case c == '"':
			i = skipString(data, i)
		case c == '-' || c >= '0' && c <= '9':
			end := i + 1
			for end < len(data) && strings.IndexByte("0123456789.eE+-", data[end]) >= 0 {
				end++
			}
			if whole, ok := integerForm(string(data[i:end])); ok {
				out = append(append(out, data[last:i]...), whole...)
				last = end
			}
			i = end
		default:
			i++
		}
	}
	if out == nil {
		return data, false
	}
	return append(out, data[last:]...), true
}

// skipString returns the index just past the JSON string starting at i.
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// integerForm returns a number literal with a fraction or an exponent as an
// integer literal, if its value is an integer of at most 20 digits.
func integerForm(lit string) (string, bool) {
	if !strings.ContainsAny(lit, ".eE") {
		return "", false
	}
	// big.Rat's parse of a literal is more than linear in its length; no
	// model writes an integer of at most 20 digits in more than 100 bytes.
	if len(lit) > 100 {
		return "", false
	}
	// big.Rat expands an exponent into that many digits, so a huge one
	// (1e999999999) is judged without it: such a value is 0, or a
	// fraction or longer than 20 digits unless written with hundreds of
	// zeros, which no model does.
	if _, exp, ok := strings.Cut(strings.ToLower(lit), "e"); ok {
		if e, err := strconv.Atoi(exp); err != nil || e > 400 || e < -400 {
			if strings.Trim(lit[:strings.IndexAny(lit, "eE")], "-+0.") == "" {
				return "0", true
			}
			return "", false
		}
	}
	var r big.Rat
	if _, ok := r.SetString(lit); !ok || !r.IsInt() {
		return "", false
	}
	whole := r.Num().String()
	if len(strings.TrimPrefix(whole, "-")) > 20 {
		return "", false
	}
	return whole, true
}

func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// unmarshalerPrefix finds the method a type's own UnmarshalJSON or
// UnmarshalText error may start with; compiled at its first use.
var unmarshalerPrefix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:\*?[\w.]+\.)?Unmarshal(?:JSON|Text): `)
})

// decodeReason words a decoding error for the model: encoding/json's
// messages name Go types and struct fields.
func decodeReason(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return "malformed JSON: " + se.Error()
		}
		// From a type's own UnmarshalJSON or UnmarshalText, such as
		// time.Time's, which may name its method.
		return unmarshalerPrefix().ReplaceAllString(strings.TrimPrefix(err.Error(), "json: "), "")
	}
	kind, lit, _ := strings.Cut(te.Value, " ")
	got := kind
	if lit != "" {
		got = lit
	} else if kind == "bool" {
		got = "boolean"
	}
	reason := fmt.Sprintf("want %s, got %s", jsonKind(te.Type), got)
	if lit != "" {
		reason = numberReason(te.Type, lit)
	}
	if te.Field == "" {
		return reason
	}
	return fmt.Sprintf("property %q: %s", te.Field, reason)
}

// numberReason says why a number does not fit a Go number type.
func numberReason(t reflect.Type, lit string) string {
	bits := t.Bits()
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !integral(lit) {
			return "want integer, got " + lit
		}
		return fmt.Sprintf("want integer from %d to %d, got %s", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1, lit)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if !integral(lit) {
			return "want integer, got " + lit
		}
		return fmt.Sprintf("want integer from 0 to %d, got %s", uint64(math.MaxUint64)>>(64-bits), lit)
	case reflect.Float32:
		return fmt.Sprintf("want number of at most %g in magnitude, got %s", math.MaxFloat32, lit)
	case reflect.Float64:
		return fmt.Sprintf("want number of at most %g in magnitude, got %s", math.MaxFloat64, lit)
	}
	return fmt.Sprintf("want %s, got %s", jsonKind(t), lit)
}

// integral reports whether a number literal is an integer: written as one,
// or with a fraction of zeros or an exponent that leaves none, or so large
// (1e30) that a float64 of it has no fraction.
func integral(lit string) bool {
	if !strings.ContainsAny(lit, ".eE") {
		return true
	}
	if _, ok := integerForm(lit); ok {
		return true
	}
	f, err := strconv.ParseFloat(lit, 64)
	return (err == nil || errors.Is(err, strconv.ErrRange)) && math.Abs(f) >= 1e20
}

// jsonKind names what JSON a Go type takes.
func jsonKind(t reflect.Type) string {
	if reflect.PointerTo(t).Implements(reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()) {
		return "string"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	if isInteger(t) {
		return "integer"
	}
	return "another kind of value"
}
