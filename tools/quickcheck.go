package tools

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// Validating an input with jsonschema-go means decoding it into a map and
// walking the schema by reflection: about 6 µs and 45 allocations for an
// object of two integers, several times the cost of the call it guards.
// Most tool schemas use a handful of keywords, so a tool compiles those into
// a quickSchema once and checks each input in one pass over its bytes, with
// no decoding and no allocation.
//
// The quick check only ever answers "certainly valid": when it is not sure
// (an invalid input, a number out of float64's range, nesting deeper than
// maxQuickDepth) it says no, and the input takes the full path through
// encoding/json and jsonschema-go, which decides and words the error. So the
// quick check changes what a call costs, never what it answers;
// FuzzQuickCheck holds it to that.

// quickSchema is a schema compiled for the quick check, made by
// newQuickSchema. A nil *quickSchema accepts any JSON value.
type quickSchema struct {
	types      kinds // allowed kinds; 0 allows every kind
	never      bool  // the false schema
	properties map[string]quickProperty
	required   uint64       // bit i: the property of index i is required
	additional *quickSchema // schema of properties not in properties; nil accepts them
	items      *quickSchema // schema of array elements; nil accepts them
	enum       []any        // allowed values: string, float64, bool or nil
	hasEnum    bool

	minimum, maximum, exclusiveMinimum, exclusiveMaximum *float64
	minLength, maxLength, minItems, maxItems             int // -1 when absent
	pattern                                              *regexp.Regexp
}

func newQuickSchema() *quickSchema {
	return &quickSchema{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
}

type quickProperty struct {
	schema *quickSchema // nil: not in properties, only required
	bit    uint64       // the property's bit in required, 0 if optional
}

// kinds is a set of JSON kinds; integer counts as a number as well.
type kinds uint8

const (
	kindNull kinds = 1 << iota
	kindBoolean
	kindObject
	kindArray
	kindNumber
	kindInteger
	kindString
)

var kindNames = map[string]kinds{
	"null": kindNull, "boolean": kindBoolean, "object": kindObject, "array": kindArray,
	"number": kindNumber | kindInteger, "integer": kindInteger, "string": kindString,
}

// quickKeywords are the keywords the quick check understands: assertions it
// implements and annotations that assert nothing. A schema with any other
// keyword anywhere is not compiled. "default" is not among them: defaults
// take the full path, which fills them in.
var quickKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "minLength": true,
	"maxLength": true, "minItems": true, "maxItems": true, "pattern": true,
	"title": true, "description": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$comment": true,
}

// compileQuick compiles a schema's JSON for the quick check. It returns nil
// when the schema uses anything the quick check does not understand.
func compileQuick(schema json.RawMessage) *quickSchema {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	delete(m, "$schema") // the keywords above mean the same in every draft jsonschema-go reads
	q, ok := compileQuickValue(m, 0)
	if !ok {
		return nil
	}
	return q
}

func compileQuickValue(v any, depth int) (*quickSchema, bool) {
	if depth > maxQuickDepth {
		return nil, false
	}
	switch s := v.(type) {
	case bool:
		q := newQuickSchema()
		q.never = !s
		return q, true
	case map[string]any:
		return compileQuickObject(s, depth)
	}
	return nil, false
}

func compileQuickObject(m map[string]any, depth int) (*quickSchema, bool) {
	q := newQuickSchema()
	for key := range m {
		if !quickKeywords[key] {
			return nil, false
		}
	}
	ok := q.compileTypes(m["type"]) &&
		q.compileProperties(m, depth) &&
		q.compileEnum(m) &&
		compileFloat(m, "minimum", &q.minimum) && compileFloat(m, "maximum", &q.maximum) &&
		compileFloat(m, "exclusiveMinimum", &q.exclusiveMinimum) &&
		compileFloat(m, "exclusiveMaximum", &q.exclusiveMaximum) &&
		compileCount(m, "minLength", &q.minLength) && compileCount(m, "maxLength", &q.maxLength) &&
		compileCount(m, "minItems", &q.minItems) && compileCount(m, "maxItems", &q.maxItems)
	if !ok {
		return nil, false
	}
	if p, ok := m["pattern"]; ok {
		s, ok := p.(string)
		if !ok {
			return nil, false
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, false
		}
		q.pattern = re
	}
	for _, key := range []string{"additionalProperties", "items"} {
		sub, present := m[key]
		if !present {
			continue
		}
		c, ok := compileQuickValue(sub, depth+1)
		if !ok {
			return nil, false
		}
		if key == "items" {
			q.items = c
		} else {
			q.additional = c
		}
	}
	return q, true
}

func (q *quickSchema) compileTypes(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		q.types = kindNames[t]
		return q.types != 0
	case []any:
		for _, e := range t {
			name, _ := e.(string)
			k := kindNames[name]
			if k == 0 {
				return false
			}
			q.types |= k
		}
		return q.types != 0
	}
	return false
}

func (q *quickSchema) compileProperties(m map[string]any, depth int) bool {
	props, _ := m["properties"].(map[string]any)
	if m["properties"] != nil && props == nil {
		return false
	}
	q.properties = make(map[string]quickProperty, len(props))
	for name, sub := range props {
		c, ok := compileQuickValue(sub, depth+1)
		if !ok {
			return false
		}
		q.properties[name] = quickProperty{schema: c}
	}
	req, present := m["required"]
	if !present {
		return true
	}
	names, ok := req.([]any)
	if !ok || len(names) > 64 {
		return false
	}
	for i, n := range names {
		name, ok := n.(string)
		if !ok {
			return false
		}
		p := q.properties[name] // a required property need not be in properties
		if p.bit == 0 {
			p.bit = 1 << i
			q.required |= p.bit
		}
		q.properties[name] = p
	}
	return true
}

// compileEnum takes enum and const when their values are scalars; equal
// scalars are what jsonschema-go's deep comparison reduces to.
func (q *quickSchema) compileEnum(m map[string]any) bool {
	values, hasEnum := m["enum"].([]any)
	if m["enum"] != nil && !hasEnum {
		return false
	}
	if c, ok := m["const"]; ok {
		if hasEnum {
			return false
		}
		values, hasEnum = []any{c}, true
	}
	for _, v := range values {
		switch v.(type) {
		case string, float64, bool, nil:
		default:
			return false
		}
	}
	q.enum, q.hasEnum = values, hasEnum
	return true
}

func compileFloat(m map[string]any, key string, dst **float64) bool {
	v, ok := m[key]
	if !ok {
		return true
	}
	f, ok := v.(float64)
	*dst = &f
	return ok
}

func compileCount(m map[string]any, key string, dst *int) bool {
	v, ok := m[key]
	if !ok {
		return true
	}
	f, ok := v.(float64)
	if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return false
	}
	*dst = int(f)
	return true
}

// maxQuickDepth bounds the nesting of schemas and inputs the quick check
// takes on; deeper ones take the full path.
const maxQuickDepth = 64

// accepts reports whether data is certainly a JSON object valid against q.
// False means "not certain": the caller must decide with the full path.
func (q *quickSchema) accepts(data []byte) bool {
	s := quickScanner{data: data}
	s.space()
	if s.peek() != '{' || !s.value(q, 0) {
		return false
	}
	s.space()
	return s.pos == len(data)
}

// quickScanner validates JSON text as it scans it. Its methods return false
// as soon as they are not sure.
type quickScanner struct {
	data []byte
	pos  int
}

func (s *quickScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *quickScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one value, which must satisfy q (nil accepts any value).
func (s *quickScanner) value(q *quickSchema, depth int) bool {
	if depth > maxQuickDepth || q != nil && q.never {
		return false
	}
	switch c := s.peek(); {
	case c == '{':
		return q.allows(kindObject) && s.object(q, depth)
	case c == '[':
		return q.allows(kindArray) && s.array(q, depth)
	case c == '"':
		return s.stringValue(q)
	case c == 't':
		return q.allows(kindBoolean) && s.literal("true") && q.allowsValue(true)
	case c == 'f':
		return q.allows(kindBoolean) && s.literal("false") && q.allowsValue(false)
	case c == 'n':
		return q.allows(kindNull) && s.literal("null") && q.allowsValue(nil)
	case c == '-' || c >= '0' && c <= '9':
		return s.number(q)
	}
	return false
}

func (q *quickSchema) allows(k kinds) bool {
	return q == nil || q.types == 0 || q.types&k != 0
}

// allowsValue checks enum and const for a scalar.
func (q *quickSchema) allowsValue(v any) bool {
	if q == nil || !q.hasEnum {
		return true
	}
	for _, e := range q.enum {
		if e == v {
			return true
		}
	}
	return false
}

func (s *quickScanner) literal(word string) bool {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return false
	}
	s.pos += len(word)
	return true
}

func (s *quickScanner) object(q *quickSchema, depth int) bool {
	if q != nil && q.hasEnum {
		return false // enum holds scalars only
	}
	s.pos++ // {
	var found uint64
	s.space()
	if s.peek() == '}' {
		s.pos++
		return q == nil || q.required == 0
	}
	for {
		s.space()
		key, ok := s.str(q != nil)
		if !ok {
			return false
		}
		s.space()
		if s.peek() != ':' {
			return false
		}
		s.pos++
		s.space()
		var sub *quickSchema
		if q != nil {
			// string(key) in a map index does not allocate.
			p := q.properties[string(key)]
			found |= p.bit
			if sub = p.schema; sub == nil {
				sub = q.additional
			}
		}
		if !s.value(sub, depth+1) {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return q == nil || found == q.required
		default:
			return false
		}
	}
}

func (s *quickScanner) array(q *quickSchema, depth int) bool {
	if q != nil && q.hasEnum {
		return false
	}
	s.pos++ // [
	var items *quickSchema
	if q != nil {
		items = q.items
	}
	n := 0
	s.space()
	if s.peek() == ']' {
		s.pos++
	} else {
		for {
			s.space()
			if !s.value(items, depth+1) {
				return false
			}
			n++
			s.space()
			c := s.peek()
			s.pos++
			if c == ']' {
				break
			}
			if c != ',' {
				return false
			}
		}
	}
	return q == nil || (q.minItems < 0 || n >= q.minItems) && (q.maxItems < 0 || n <= q.maxItems)
}

// str scans a string. When exact is set it also returns the string's
// value; it is the scanned bytes themselves unless the string holds escapes or
// invalid UTF-8, which encoding/json decodes, and then it costs a decoding.
func (s *quickScanner) str(exact bool) ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.pos + 1
	escaped, ascii := false, true
	for i := start; i < len(s.data); i++ {
		switch c := s.data[i]; {
		case c == '"':
			s.pos = i + 1
			raw := s.data[start:i]
			if !exact || !escaped && (ascii || utf8.Valid(raw)) {
				return raw, true
			}
			var v string
			if json.Unmarshal(s.data[start-1:i+1], &v) != nil {
				return nil, false
			}
			return []byte(v), true
		case c == '\\':
			escaped = true
			if i+1 >= len(s.data) {
				return nil, false
			}
			i++
			switch s.data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(s.data) || !isHex4(s.data[i+1:i+5]) {
					return nil, false
				}
				i += 4
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (s *quickScanner) stringValue(q *quickSchema) bool {
	if !q.allows(kindString) {
		return false
	}
	exact := q != nil && (q.hasEnum || q.minLength >= 0 || q.maxLength >= 0 || q.pattern != nil)
	b, ok := s.str(exact)
	if !ok || !exact {
		return ok
	}
	if q.hasEnum && !q.allowsValue(string(b)) {
		return false
	}
	if q.minLength >= 0 || q.maxLength >= 0 {
		n := utf8.RuneCount(b)
		if q.minLength >= 0 && n < q.minLength || q.maxLength >= 0 && n > q.maxLength {
			return false
		}
	}
	return q.pattern == nil || q.pattern.Match(b)
}

// number scans a number as RFC 8259 writes it and checks it as float64, the
// type encoding/json gives it and jsonschema-go compares.
func (s *quickScanner) number(q *quickSchema) bool {
	start := s.pos
	if s.peek() == '-' {
		s.pos++
	}
	switch c := s.peek(); {
	case c == '0':
		s.pos++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return false
	}
	if s.peek() == '.' {
		s.pos++
		if !s.digits() {
			return false
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.pos++
		if c := s.peek(); c == '+' || c == '-' {
			s.pos++
		}
		if !s.digits() {
			return false
		}
	}
	f, ok := parseFloat(s.data[start:s.pos])
	if !ok {
		return false // out of float64's range: encoding/json rejects it
	}
	if q == nil {
		return true
	}
	k := kindNumber
	if f == math.Trunc(f) {
		k = kindInteger
	}
	return q.allows(k) && q.allowsValue(f) &&
		(q.minimum == nil || f >= *q.minimum) && (q.maximum == nil || f <= *q.maximum) &&
		(q.exclusiveMinimum == nil || f > *q.exclusiveMinimum) &&
		(q.exclusiveMaximum == nil || f < *q.exclusiveMaximum)
}

// digits scans one or more decimal digits.
func (s *quickScanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}

// parseFloat parses a number as strconv.ParseFloat does, without making a
// string of it for the common short integers, which float64 holds exactly.
func parseFloat(b []byte) (float64, bool) {
	digits := b
	if len(b) > 0 && b[0] == '-' {
		digits = b[1:]
	}
	if n, ok := smallInt(digits); ok {
		if len(digits) < len(b) {
			return -n, true
		}
		return n, true
	}
	f, err := strconv.ParseFloat(string(b), 64)
	return f, err == nil
}

// smallInt parses up to 15 decimal digits.
func smallInt(digits []byte) (float64, bool) {
	if len(digits) == 0 || len(digits) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return float64(n), true
}
