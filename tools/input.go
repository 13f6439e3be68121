package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// prepare checks that input is a JSON object with no name twice in an
// object, fills in the schema's defaults and validates the result. It returns
// the object, defaults included, as JSON; a schema without defaults gets the
// input back as it came, but for bytes that are not UTF-8, made U+FFFD.
//
// jsonschema-go validates every input, as the official MCP Go SDK does.
//
// With defaults, the input is decoded twice. Validation needs float64 numbers
// (jsonschema-go takes a json.Number for a string), while the copy handed on
// keeps each number as written, so that an int64 larger than 2^53 survives.
//
// The defaults and the wording of errors have functions of their own. Their
// locals would widen prepare's frame, which sits under the decoder's on the
// tool's goroutine: its stack would then grow, a copy a call (BENCHMARKS.md,
// section 1).
func (t *Tool) prepare(input json.RawMessage) (json.RawMessage, error) {
	data := bytes.TrimSpace(input)
	if len(data) == 0 {
		data = []byte("{}")
	}
	if !utf8.Valid(data) {
		// What is validated is what is handed on.
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	var decoded any // into an any, encoding/json builds the map without reflection
	err := json.Unmarshal(data, &decoded)
	check, _ := decoded.(map[string]any)
	if err != nil || check == nil {
		return nil, t.notAnObject(data, err)
	}
	if repeatsName(data, decoded) {
		// The schema saw the last value, as encoding/json keeps it; a
		// program reading the text may take the first.
		name, _ := duplicateName(data)
		return nil, t.inputError("property %q given twice", name)
	}
	if !t.defaults {
		// Nothing to fill in: validate and hand the input on as it came.
		if err := t.validate(check); err != nil {
			return nil, err
		}
		return data, nil
	}
	return t.withDefaults(data, check)
}

// withDefaults fills in the schema's defaults in check, the input decoded
// for validation, and in a copy of data that keeps numbers as written. It
// validates the first and returns the second as JSON.
func (t *Tool) withDefaults(data []byte, check map[string]any) (json.RawMessage, error) {
	var keep map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&keep); err != nil {
		return nil, t.inputError("malformed JSON: %v", err)
	}
	if err := t.resolved.ApplyDefaults(&check); err != nil {
		return nil, fmt.Errorf("applying the schema's defaults: %w", err)
	}
	if err := t.resolved.ApplyDefaults(&keep); err != nil {
		return nil, fmt.Errorf("applying the schema's defaults: %w", err)
	}
	if err := t.validate(check); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // hand the input on as the model wrote it: <, > and & stay as they are
	if err := enc.Encode(keep); err != nil {
		return nil, fmt.Errorf("encoding the input: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// validate validates instance against the tool's schema, and words a
// failure for the model.
func (t *Tool) validate(instance map[string]any) error {
	if err := t.resolved.Validate(instance); err != nil {
		return newInputError(t.name, t.explain(instance, err))
	}
	return nil
}

// notAnObject words why data, which did not decode into an object with err,
// is not an input.
func (t *Tool) notAnObject(data []byte, err error) *InputError {
	var te *json.UnmarshalTypeError
	switch {
	case !json.Valid(data):
		return t.inputError("malformed JSON: %v", err)
	case data[0] == '{' && errors.As(err, &te):
		return t.inputError("%s", decodeReason(err))
	}
	return t.inputError("not a JSON object")
}

func (t *Tool) inputError(format string, args ...any) *InputError {
	return newInputError(t.name, fmt.Sprintf(format, args...))
}

// repeatsName reports whether an object of data, valid JSON, has a name
// twice; decoded is data as encoding/json decodes it. Outside strings,
// valid JSON has one colon a name. A decoded object keeps a repeated name
// once, so it has fewer names than the text. It allocates nothing, where
// duplicateName's tokens cost about 30 allocations a tool call
// (BENCHMARKS.md, section 1).
func repeatsName(data []byte, decoded any) bool {
	colons := 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped = c == '\\'
			inString = c != '"'
		case c == '"':
			inString = true
		case c == ':':
			colons++
		}
	}
	return colons != decodedNames(decoded)
}

// decodedNames counts the names of the objects in v, decoded into an any.
func decodedNames(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		n = len(v)
		for _, e := range v {
			n += decodedNames(e)
		}
	case []any:
		for _, e := range v {
			n += decodedNames(e)
		}
	}
	return n
}

// duplicateName returns the first name that an object of data, valid JSON,
// has twice, if any. Names are compared as encoding/json decodes them, so
// "a" and "\u0061" are one name.
func duplicateName(data []byte) (string, bool) {
	type object struct {
		names map[string]bool // nil for an array
		name  bool            // the next token is a name
	}
	var open []object
	// A value that ends in an object is followed by a name or the end.
	valueEnded := func() {
		if n := len(open); n > 0 && open[n-1].names != nil {
			open[n-1].name = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers are skipped: one out of float64's range is no error here
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // io.EOF after the object
		}
		switch tok {
		case json.Delim('{'):
			open = append(open, object{names: map[string]bool{}, name: true})
		case json.Delim('['):
			open = append(open, object{})
		case json.Delim('}'), json.Delim(']'):
			open = open[:len(open)-1]
			valueEnded()
		default:
			top := len(open) - 1
			if top < 0 || !open[top].name {
				valueEnded()
				break
			}
			name, ok := tok.(string)
			if !ok {
				return "", false // not valid JSON after all
			}
			if open[top].names[name] {
				return name, true
			}
			open[top].names[name] = true
			open[top].name = false
		}
	}
}
