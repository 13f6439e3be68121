package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
		var te *json.UnmarshalTypeError
		switch {
		case !json.Valid(data):
			return nil, t.inputError("malformed JSON: %v", err)
		case data[0] == '{' && errors.As(err, &te):
			return nil, t.inputError("%s", decodeReason(err))
		}
		return nil, t.inputError("not a JSON object")
	}
	if name, ok := duplicateName(data); ok {
		// The schema saw the last value, as encoding/json keeps it; a
		// program reading the text may take the first.
		return nil, t.inputError("property %q given twice", name)
	}
	if !t.defaults {
		// Nothing to fill in: validate and hand the input on as it came.
		if err := t.validate(check); err != nil {
			return nil, err
		}
		return data, nil
	}
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

func (t *Tool) inputError(format string, args ...any) *InputError {
	return newInputError(t.name, fmt.Sprintf(format, args...))
}

// duplicateName returns a name that an object of data, valid JSON, has
// twice, if any, compared as encoding/json decodes names. It allocates
// only for names with escapes and for objects nested deeper than eight.
func duplicateName(data []byte) (string, bool) {
	type frame struct {
		names int  // where the object's names start in names; -1 for an array
		name  bool // the next string is a name
	}
	var frameBuf [8]frame
	var nameBuf [16][]byte
	stack, names := frameBuf[:0], nameBuf[:0]
	for i := 0; i < len(data); {
		switch data[i] {
		case '{':
			stack = append(stack, frame{names: len(names), name: true})
		case '[':
			stack = append(stack, frame{names: -1})
		case '}', ']':
			if len(stack) == 0 {
				return "", false // not valid JSON after all
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if top.names < 0 {
				break
			}
			own := names[top.names:]
			slices.SortFunc(own, bytes.Compare)
			for k := 1; k < len(own); k++ {
				if bytes.Equal(own[k-1], own[k]) {
					return string(own[k]), true
				}
			}
			names = names[:top.names]
		case ',':
			if n := len(stack); n > 0 && stack[n-1].names >= 0 {
				stack[n-1].name = true
			}
		case '"':
			end := skipString(data, i)
			if n := len(stack); n > 0 && stack[n-1].name {
				stack[n-1].name = false
				names = append(names, nameOf(data[i:end]))
			}
			i = end
			continue
		}
		i++
	}
	return "", false
}

// nameOf returns a JSON string's text: its bytes between the quotes, or,
// with escapes, as encoding/json decodes it.
func nameOf(quoted []byte) []byte {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	var s string
	if json.Unmarshal(quoted, &s) != nil {
		return inner
	}
	return []byte(s)
}
