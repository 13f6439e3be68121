package wire

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	smithydocument "github.com/aws/smithy-go/document"
)

// Encoded returns d as a document that keeps its JSON. The SDK encodes a
// document again, by reflection, at every request that carries it. A
// conversation carries the same ones at every turn: each tool's input
// schema, and each call's input and each tool's result in the history.
// Encoded's is encoded once, here, so the bytes a request carries do not
// change. They are the SDK's document encoder's, whatever wrote d: a
// document the SDK decoded (a Converse reply's, a restored history's) is
// written by encoding/json, which escapes <, >, & and writes \b and \f, and
// a history's bytes would change when it is restored. Decoding it is d's
// (UnmarshalSmithyDocument). A document that cannot be encoded is returned
// as it is, to fail where it would have.
func Encoded(d document.Interface) document.Interface {
	if d == nil {
		return nil
	}
	if _, ok := d.(*encoded); ok {
		return d
	}
	b, err := d.MarshalSmithyDocument()
	if err != nil {
		return d
	}
	return &encoded{Interface: d, json: encoderForm(b)}
}

// encodingJSONEscapes are what encoding/json writes in a string and the
// SDK's document encoder does not.
var encodingJSONEscapes = [][]byte{[]byte(`\u003c`), []byte(`\u003e`), []byte(`\u0026`), []byte(`\b`), []byte(`\f`)}

// encoderForm returns JSON b as the SDK's document encoder writes it. Both
// encoders sort keys and keep numbers as decoded; only encoding/json's
// escapes differ, so JSON without them is returned as it is.
func encoderForm(b []byte) []byte {
	if !slices.ContainsFunc(encodingJSONEscapes, func(e []byte) bool { return bytes.Contains(b, e) }) {
		return b
	}
	d, err := lazyDocument(b)
	if err != nil {
		return b
	}
	out, err := d.MarshalSmithyDocument()
	if err != nil {
		return b
	}
	return out
}

// lazyDocument is the lazy document of JSON b's value, its numbers exact.
func lazyDocument(b []byte) (document.Interface, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return document.NewLazyDocument(ExactNumbers(v)), nil
}

// EncodedJSON returns the document of JSON b, as Encoded would make it, if b
// is what the SDK's encoder writes for it: valid, without spaces, every
// object's keys non-empty and in increasing order, and no string holding an
// escape or a character the SDK escapes. Once compacted, the call inputs
// that models stream usually are (all those in testdata are). b is not
// decoded until the document is: UnmarshalSmithyDocument decodes as a lazy
// document of b's value does. ok is false for any other b.
func EncodedJSON(b []byte) (d document.Interface, ok bool) {
	if !json.Valid(b) || !canonical(b) {
		return nil, false
	}
	b = bytes.Clone(b)
	return &encoded{Interface: jsonDocument{Interface: marker, json: b}, json: b}, true
}

// marker is a lazy document of nothing, for the SDK's unexported marker
// method of jsonDocument; it is never encoded or decoded.
var marker = document.NewLazyDocument(nil)

// jsonDocument is the document of JSON already in the SDK's encoding.
type jsonDocument struct {
	document.Interface // marker
	json               []byte
}

// UnmarshalSmithyDocument decodes the JSON into v as a lazy document of its
// value does.
func (d jsonDocument) UnmarshalSmithyDocument(v any) error {
	lazy, err := lazyDocument(d.json)
	if err != nil {
		return err
	}
	return lazy.UnmarshalSmithyDocument(v)
}

// MarshalSmithyDocument returns a copy of the JSON.
func (d jsonDocument) MarshalSmithyDocument() ([]byte, error) {
	return bytes.Clone(d.json), nil
}

// canonical reports whether valid JSON b is in the SDK's encoding (see
// EncodedJSON). Objects nested deeper than it tracks are left to the SDK.
func canonical(b []byte) bool {
	var last [16][]byte // by depth, the last key of each open object
	var inObject [16]bool
	depth, key := -1, false // key: the next string is an object's key
	for i := 0; i < len(b); {
		switch c := b[i]; c {
		case '{', '[':
			if depth++; depth == len(last) {
				return false
			}
			last[depth], inObject[depth], key = nil, c == '{', c == '{'
			i++
		case '}', ']':
			depth--
			i++
		case ',':
			key = depth >= 0 && inObject[depth]
			i++
		case ':':
			i++
		case '"':
			end := i + 1
			for end < len(b) && b[end] != '"' {
				if b[end] < 0x20 || b[end] == '\\' {
					return false
				}
				end++
			}
			s := b[i+1 : end]
			if !utf8.Valid(s) || bytes.Contains(s, []byte("\u2028")) || bytes.Contains(s, []byte("\u2029")) {
				return false
			}
			if key {
				if len(s) == 0 || last[depth] != nil && bytes.Compare(last[depth], s) >= 0 {
					return false
				}
				last[depth], key = s, false
			}
			i = end + 1
		case ' ', '\t', '\n', '\r':
			return false
		default: // a number, true, false or null, written as it is
			i++
		}
	}
	return true
}

// ExactNumbers turns the json.Numbers of a value decoded with
// json.Decoder.UseNumber into smithy document numbers, which the SDK encodes
// digit for digit.
func ExactNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		return smithydocument.Number(v)
	case map[string]any:
		for k, e := range v {
			v[k] = ExactNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = ExactNumbers(e)
		}
	}
	return v
}

// encoded is a document with its JSON. It embeds the document it encodes
// for the SDK's unexported marker method and for decoding.
type encoded struct {
	document.Interface
	json []byte
}

// MarshalSmithyDocument returns a copy of the JSON, which its caller may
// change: a tool is handed its input's.
func (d *encoded) MarshalSmithyDocument() ([]byte, error) {
	return bytes.Clone(d.json), nil
}
