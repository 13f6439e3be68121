package trace

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestShort(t *testing.T) {
	long := strings.Repeat("ab ", 1000)
	tests := []struct {
		name, in, want string
	}{
		{"short", "What is 2 + 2?", "What is 2 + 2?"},
		{"white space", "  one\n\ttwo   three\r\n", "one two three"},
		{"at the cap", strings.Repeat("x", MaxRunes), strings.Repeat("x", MaxRunes)},
		{"over the cap", strings.Repeat("x", MaxRunes+1), strings.Repeat("x", MaxRunes-1) + "…"},
		{"long with spaces", long, strings.TrimSpace(long[:MaxRunes-1]) + "…"},
		{"escape sequence", "red \x1b[31mtext", `"red \x1b[31mtext"`},
		{"invalid UTF-8", "a\xffb", "a\ufffdb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Short(tt.in))
		})
	}
}

func TestPrintable(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"tooluse_Qm3vXa8TSpWlB0cYd2kF1g", "tooluse_Qm3vXa8TSpWlB0cYd2kF1g"},
		{"functions.get_weather:0", "functions.get_weather:0"},
		{"café ☕", "café ☕"},
		{"id\x1b]0;pwned\x07", `"id\x1b]0;pwned\a"`},
		{"two\nlines", `"two\nlines"`},
		{"bell\x07", `"bell\a"`},
		{"\u202eevil", `"\u202eevil"`}, // right-to-left override
		{"bad\xc3", `"bad\xc3"`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, Printable(tt.in))
		})
	}
}

func TestCountAndDuration(t *testing.T) {
	assert.Equal(t, "1 message", count(1, "message"))
	assert.Equal(t, "0 decisions", count(0, "decision"))
	assert.Equal(t, 1200*time.Microsecond, duration(1234*time.Microsecond))
	assert.Equal(t, 2*time.Second+3*time.Millisecond, duration(2*time.Second+3456*time.Microsecond))
	assert.Equal(t, 12*time.Microsecond, duration(12345*time.Nanosecond))
}
