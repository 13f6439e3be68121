package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDuplicateName(t *testing.T) {
	tests := []struct {
		json string
		name string // "" for none
	}{
		{`{}`, ""},
		{`{"a":1,"b":2}`, ""},
		{`{"a":1,"a":2}`, "a"},
		{`{"a":{"b":1},"b":2}`, ""},
		{`{"a":{"b":1,"b":2}}`, "b"},
		{`{"a":[{"b":1},{"b":2}]}`, ""},
		{`{"a":[{"b":1,"b":2}]}`, "b"},
		{`{"a":"{\"a\":1,\"a\":2}"}`, ""},
		{`{"a":1,"\u0061":2}`, "a"},
		{`{"a\"b":1,"a\u0022b":2}`, `a"b`},
		{`{"a":["a","a"],"b":{"a":1}}`, ""},
		{`{ "a" : 1 , "a" : 2 }`, "a"},
		{`{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"x":1,"x":2}}}}}}}}}}`, "x"},
		{`{"b":1,"a":2,"b":3,"a":4}`, "b"},
		{`{"a":1,"a":2,"x":{"b":1,"b":2}}`, "a"},
		{`{"x":{"b":1,"b":2},"a":1,"a":2}`, "b"},
		{`{"a":[[{"b":1}],{"c":[{"d":1,"e":{"f":1,"f":2}}]}]}`, "f"},
		{`{"a":[{"b":1},{"b":2}],"b":3}`, ""},
		{`{"\u0061":1,"a":2}`, "a"},
		{`{"\u00e9":1,"é":2}`, "é"},
		{`{"a":1e400,"a":2}`, "a"},
		{`{"a":{},"b":[],"c":{},"a":null}`, "a"},
		{`{"` + strings.Repeat("k", 100) + `":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"b":0}`, "b"},
	}
	for _, tt := range tests {
		name, ok := duplicateName([]byte(tt.json))
		assert.Equal(t, tt.name != "", ok, tt.json)
		assert.Equal(t, tt.name, name, tt.json)
		var decoded any
		if json.Unmarshal([]byte(tt.json), &decoded) == nil { // prepare rejects 1e400 before it asks
			assert.Equal(t, ok, repeatsName([]byte(tt.json), decoded), "repeatsName: %s", tt.json)
		}
	}
	name, ok := duplicateName([]byte(`{"":1,"":2}`))
	assert.True(t, ok, "the empty name twice")
	assert.Empty(t, name)
}

// FuzzDuplicateName checks duplicateName, and repeatsName, against
// encoding/json's own reading of the names of each object.
func FuzzDuplicateName(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `{"\u0061":1,"a":2}`, `{"a":[1,{"b":2}],"c":"}"}`, `{"a:\\":"\":","a:\\":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD") // as prepare hands it on
		if !json.Valid([]byte(s)) || !strings.HasPrefix(s, "{") {
			return
		}
		_, got := duplicateName([]byte(s))
		dec := json.NewDecoder(strings.NewReader(s))
		want := hasDuplicate(dec)
		if got != want {
			t.Fatalf("duplicateName(%q) = %v, want %v", s, got, want)
		}
		var decoded any
		if json.Unmarshal([]byte(s), &decoded) == nil && repeatsName([]byte(s), decoded) != want {
			t.Fatalf("repeatsName(%q) = %v, want %v", s, !want, want)
		}
	})
}

// hasDuplicate reads one JSON value from dec and reports whether an object
// in it has a name twice.
func hasDuplicate(dec *json.Decoder) bool {
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	dup := false
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			name, _ := dec.Token()
			s, _ := name.(string)
			dup = seen[s] || dup
			seen[s] = true
			dup = hasDuplicate(dec) || dup
		}
		_, _ = dec.Token()
	case json.Delim('['):
		for dec.More() {
			dup = hasDuplicate(dec) || dup
		}
		_, _ = dec.Token()
	}
	return dup
}
