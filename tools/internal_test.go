package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

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
