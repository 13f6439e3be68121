package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/tools"
)

func TestCurrentDatetime(t *testing.T) {
	fixed := time.Date(2025, time.July, 4, 9, 30, 15, 0, time.FixedZone("EDT", -4*3600))
	tool := tools.CurrentDatetime(func() time.Time { return fixed })
	assert.Equal(t, "get_current_datetime", tool.Name())
	assert.True(t, tool.Speculative())
	assert.Contains(t, string(tool.InputSchema()), "strftime")

	tests := []struct {
		input string
		want  string
	}{
		{`{}`, "2025-07-04 09:30:15"},
		{``, "2025-07-04 09:30:15"},
		{`{"date_format":"%Y-%m-%d"}`, "2025-07-04"},
		{`{"date_format":"%A, %B %d, %Y at %I:%M %p %Z"}`, "Friday, July 04, 2025 at 09:30 AM EDT"},
		{`{"date_format":"%H:%M:%S%z"}`, "09:30:15-0400"},
		{`{"date_format":"%j %a %b"}`, "185 Fri Jul"},
		{`{"date_format":"%s"}`, "1751635815"},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			out, err := tool.Call(context.Background(), json.RawMessage(tt.input))
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
		})
	}
}

func TestCurrentDatetimeErrors(t *testing.T) {
	tool := tools.CurrentDatetime(nil)
	tests := []struct {
		input string
		want  string
	}{
		{`{"date_format":""}`, `invalid input: property "date_format": must not be empty`},
		{`{"date_format":"%Y %Q"}`, `invalid input: property "date_format": unknown directive "%Q"`},
		{`{"date_format":7}`, `invalid input: property "date_format": want string, got integer`},
		{`{"format":"%Y"}`, `invalid input: unexpected property "format"`},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			_, err := tool.Call(context.Background(), json.RawMessage(tt.input))
			require.ErrorIs(t, err, tools.ErrInvalidInput)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestCurrentDatetimeDefaultClock(t *testing.T) {
	out, err := tools.CurrentDatetime(nil).Call(context.Background(), json.RawMessage(`{"date_format":"%Y"}`))
	require.NoError(t, err)
	assert.Equal(t, time.Now().Format("2006"), out) // flaky only at the stroke of New Year
}

func TestCalculator(t *testing.T) {
	tool := tools.Calculator()
	assert.Equal(t, "calculator", tool.Name())
	tests := []struct {
		input string
		want  float64
	}{
		{`{"a":10,"b":10}`, 20},
		{`{"a":10,"b":10,"operation":"add"}`, 20},
		{`{"a":10,"b":4,"operation":"subtract"}`, 6},
		{`{"a":2.5,"b":4,"operation":"multiply"}`, 10},
		{`{"a":1,"b":8,"operation":"divide"}`, 0.125},
		{`{"a":-3,"b":0.5}`, -2.5},
		{`{"a":0,"b":7,"operation":"divide"}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			out, err := tool.Call(context.Background(), json.RawMessage(tt.input))
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
		})
	}

	t.Run("result encodes as a JSON number", func(t *testing.T) {
		out, err := tool.Call(context.Background(), json.RawMessage(`{"a":10,"b":10}`))
		require.NoError(t, err)
		b, err := json.Marshal(out)
		require.NoError(t, err)
		assert.Equal(t, "20", string(b))
	})
}

func TestCalculatorErrors(t *testing.T) {
	tool := tools.Calculator()
	tests := []struct {
		input   string
		want    string
		isInput bool
	}{
		{`{"a":1,"b":0,"operation":"divide"}`, "division by zero", false},
		{`{"a":1e308,"b":10,"operation":"multiply"}`, "too large", false},
		{`{"a":1,"b":2,"operation":"power"}`, `property "operation": want one of [add subtract multiply divide], got power`, true},
		{`{"a":1}`, `missing required property "b"`, true},
		{`{"a":"1","b":2}`, `property "a": want number, got string`, true},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			_, err := tool.Call(context.Background(), json.RawMessage(tt.input))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, tt.isInput, isInputError(err))
		})
	}
}

func isInputError(err error) bool {
	var inErr *tools.InputError
	return errors.As(err, &inErr)
}

func TestBuiltins(t *testing.T) {
	r, err := tools.NewRegistry(tools.Builtins()...)
	require.NoError(t, err)
	assert.Equal(t, []string{"get_current_datetime", "calculator"}, r.Names())
	for _, tool := range r.Tools() {
		assert.True(t, tool.Speculative(), tool.Name())
		assert.Zero(t, tool.Timeout(), tool.Name())
	}
}
