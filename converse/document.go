package converse

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"

	"github.com/tooluse/bedrock/tools"
)

// documentJSON returns the JSON of a smithy document. MarshalSmithyDocument
// works for the documents the SDK decodes and for lazy documents alike,
// unlike UnmarshalSmithyDocument (aws-sdk-go-v2 issue 3288).
//
// A document the SDK decoded holds the JSON value it read (maps, slices,
// strings, json.Numbers, bools and nils) and gives it out through a Value
// method. appendJSON writes such a value without reflection, the same bytes
// as json.Marshal in a fraction of the time; anything else takes
// MarshalSmithyDocument.
func documentJSON(d document.Interface) (json.RawMessage, error) {
	if d == nil {
		return json.RawMessage("{}"), nil
	}
	if v, ok := d.(interface{ Value() any }); ok {
		if b, ok := appendJSON(make([]byte, 0, 64), v.Value(), 0); ok {
			return b, nil
		}
	}
	b, err := d.MarshalSmithyDocument()
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read the input document: %v", tools.ErrInvalidInput, err)
	}
	return b, nil
}

// maxDocumentDepth bounds appendJSON's recursion; deeper values take
// MarshalSmithyDocument.
const maxDocumentDepth = 100

// appendJSON appends the JSON of a decoded JSON value as json.Marshal writes
// it: object keys sorted, strings escaped as encoding/json escapes them. It
// reports false for any other value.
func appendJSON(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxDocumentDepth {
		return nil, false
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		if v {
			return append(b, "true"...), true
		}
		return append(b, "false"...), true
	case json.Number:
		if !validNumber(string(v)) {
			return nil, false
		}
		return append(b, v...), true
	case string:
		return appendString(b, v), true
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJSON(b, e, depth+1); !ok {
				return nil, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		var small [8]string // tool inputs have few properties: sort them on the stack
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var ok bool
			if b, ok = appendJSON(b, v[k], depth+1); !ok {
				return nil, false
			}
		}
		return append(b, '}'), true
	}
	return nil, false
}

// appendString writes a string as encoding/json does: strings of plain
// characters as they are, any other through json.Marshal, which escapes
// quotes, controls, HTML characters, U+2028 and U+2029, and replaces invalid
// UTF-8.
func appendString(b []byte, s string) []byte {
	if plainString(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// validNumber reports whether s is a JSON number, as RFC 8259 writes one.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := skipDigits(s, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func skipDigits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
