package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// prepare checks that input is a JSON object, fills in the schema's defaults
// and validates the result. It returns the object, defaults included, as JSON;
// a schema without defaults gets the input back as it came.
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
	var check map[string]any
	if err := json.Unmarshal(data, &check); err != nil || check == nil {
		if !json.Valid(data) {
			return nil, t.inputError("malformed JSON: %v", err)
		}
		return nil, t.inputError("not a JSON object")
	}
	if !t.defaults {
		// Nothing to fill in: validate and hand the input on as it came.
		if err := t.resolved.Validate(check); err != nil {
			return nil, &InputError{Tool: t.name, Reason: t.explain(check, err)}
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
	if err := t.resolved.Validate(check); err != nil {
		return nil, &InputError{Tool: t.name, Reason: t.explain(check, err)}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // hand the input on as the model wrote it: <, > and & stay as they are
	if err := enc.Encode(keep); err != nil {
		return nil, fmt.Errorf("encoding the input: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

func (t *Tool) inputError(format string, args ...any) *InputError {
	return &InputError{Tool: t.name, Reason: fmt.Sprintf(format, args...)}
}
