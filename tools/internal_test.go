package tools

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBrokenBuiltin checks that a built-in that cannot be made reports why
// from Registry.Add and Call, instead of panicking.
func TestBrokenBuiltin(t *testing.T) {
	fn := func(context.Context, datetimeInput) (string, error) { return "", nil }
	broken := builtin("broken", "Cannot be made.", fn, func(s *jsonschema.Schema) {
		s.Properties["date_format"].Default = json.RawMessage(`5`) // not a string
	})
	require.NotNil(t, broken)
	assert.Equal(t, "broken", broken.Name())

	var r Registry
	err := r.Add(broken)
	require.ErrorIs(t, err, ErrInvalidTool)
	assert.Contains(t, err.Error(), `tools: invalid tool "broken": input schema`)
	_, err = broken.Call(context.Background(), json.RawMessage(`{}`))
	assert.ErrorIs(t, err, ErrInvalidTool)
}

func TestCappedBuffer(t *testing.T) {
	overflows := 0
	b := &cappedBuffer{limit: 5, overflow: func() { overflows++ }}
	n, err := b.Write([]byte("abc"))
	assert.Equal(t, 3, n)
	require.NoError(t, err)
	_, err = b.Write([]byte("de"))
	require.NoError(t, err, "the limit is inclusive")
	_, err = b.Write([]byte("f"))
	assert.ErrorIs(t, err, ErrOutputTooLarge)
	_, err = b.Write([]byte("g"))
	assert.ErrorIs(t, err, ErrOutputTooLarge)
	assert.Equal(t, 1, overflows)
	assert.True(t, b.overflowed())
	assert.Equal(t, "abcde", string(b.bytes()))
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"short", []string{" a", "b\n"}, "ab"},
		{"exact", []string{"abcd"}, "abcd"},
		{"cut across writes", []string{"abc", "def"}, "...cdef"},
		{"one long write", []string{"abcdefgh"}, "...efgh"},
		{"cut inside a character", []string{"xxxé", "abc"}, "...abc"}, // é is two bytes; its second byte is dropped
		{"invalid UTF-8", []string{"a\xffb"}, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &tailBuffer{size: 4}
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				require.NoError(t, err)
				assert.Equal(t, len(w), n)
			}
			assert.Equal(t, tt.want, b.String())
		})
	}
}

func TestExitErrorText(t *testing.T) {
	assert.Equal(t, "exit status 3: boom", (&ExitError{Code: 3, Stderr: "boom"}).Error())
	assert.Equal(t, "exit status 2", (&ExitError{Code: 2}).Error())
	assert.Equal(t, "killed by a signal: boom", (&ExitError{Code: -1, Stderr: "boom"}).Error())
}

func TestParseViolationFallsBack(t *testing.T) {
	// An error without jsonschema-go's wrapping keeps its text, on one line.
	v := parseViolation(errors.New("oneOf: validated against both\nA and B"))
	assert.Empty(t, v.path)
	assert.Equal(t, "oneOf: validated against both | A and B", v.String())
	assert.False(t, strings.Contains(v.String(), "\n"))
}

func TestIntegerForm(t *testing.T) {
	tests := []struct {
		lit, want string
		ok        bool
	}{
		{"3.0", "3", true}, {"-3.00", "-3", true}, {"1e2", "100", true}, {"1E+2", "100", true},
		{"250e-1", "25", true}, {"0.0001e4", "1", true}, {"-0.0", "0", true}, {"0e-999999", "0", true},
		{"12.5e1", "125", true}, {"1.8446744073709551615e19", "18446744073709551615", true},
		{"0.00012e4", "", false}, {"3.5", "", false}, {"1e-1", "", false}, {"3e-99999999999999999999", "", false},
		{"1e21", "", false}, {"1e999999999", "", false}, {"3", "", false},
		// Not parsed past 100 bytes, where big.Rat's parse is more than linear.
		{"1." + strings.Repeat("0", 97) + "1", "", false}, {"1." + strings.Repeat("0", 98), "1", true}, {"1." + strings.Repeat("0", 99), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.lit, func(t *testing.T) {
			got, ok := integerForm(tt.lit)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestIntegralNumbersLeavesStringsAlone(t *testing.T) {
	out, changed := integralNumbers([]byte(`{"a":"1.0 \"2.0\" \\","b":[3.0,4.5,-6e1],"c":7}`))
	assert.True(t, changed)
	assert.Equal(t, `{"a":"1.0 \"2.0\" \\","b":[3,4.5,-60],"c":7}`, string(out))
	_, changed = integralNumbers([]byte(`{"a":1,"b":"2.0"}`))
	assert.False(t, changed)
}

// TestDecodeReason words the errors of encoding/json for the model, without
// Go type or field names; most of them a tool's schema catches first.
func TestDecodeReason(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type input struct {
		I   int       `json:"i"`
		U16 uint16    `json:"u16"`
		F32 float32   `json:"f32"`
		S   string    `json:"s"`
		B   bool      `json:"b"`
		L   []int     `json:"l"`
		O   inner     `json:"o"`
		P   *inner    `json:"p"`
		T   time.Time `json:"t"`
	}
	tests := []struct{ input, want string }{
		{`{"i":3.5}`, `property "i": want integer, got 3.5`},
		{`{"i":2.5e-1}`, `property "i": want integer, got 2.5e-1`},
		{`{"i":1e30}`, `property "i": want integer from -9223372036854775808 to 9223372036854775807, got 1e30`},
		{`{"u16":-1}`, `property "u16": want integer from 0 to 65535, got -1`},
		{`{"f32":-1e39}`, `property "f32": want number of at most 3.4028234663852886e+38 in magnitude, got -1e39`},
		{`{"s":1}`, `property "s": want string, got number`},
		{`{"b":"yes"}`, `property "b": want boolean, got string`},
		{`{"l":{}}`, `property "l": want array, got object`},
		{`{"o":[]}`, `property "o": want object, got array`},
		{`{"o":{"n":true}}`, `property "o.n": want integer, got boolean`},
		{`{"p":{"n":"1"}}`, `property "p.n": want integer, got string`},
		{`{"t":3}`, `input is not a JSON string`},
		{`{"t":"yesterday"}`, `parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		{`{"i":1`, `malformed JSON: unexpected end of JSON input`},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			var in input
			err := json.Unmarshal([]byte(tt.input), &in)
			require.Error(t, err)
			assert.Equal(t, tt.want, decodeReason(err))
		})
	}
}

// FuzzValidName checks validName against the rule it stands for,
// namePattern: the seeds run with every test, the fuzzer finds more.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"", "a", "get_weather", "A-Z_0-9", "a b", "a.b", "é", "a\x00", "-", "_",
		strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("é", 32), "tool\n"} {
		f.Add(s)
	}
	for c := range 256 {
		f.Add(string([]byte{byte(c)}))
	}
	re := regexp.MustCompile(namePattern)
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := validName(name), re.MatchString(name); got != want {
			t.Fatalf("validName(%q) = %v, namePattern says %v", name, got, want)
		}
	})
}
