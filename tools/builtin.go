package tools

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

const defaultDateFormat = "%Y-%m-%d %H:%M:%S"

type datetimeInput struct {
	DateFormat string `json:"date_format,omitempty" jsonschema:"the format of the result in strftime notation (Python/C), for example %Y-%m-%d %H:%M:%S or %A %d %B %Y"`
}

// CurrentDatetime returns the tool "get_current_datetime", which reports the
// current date and time formatted with the strftime format in its optional
// "date_format" property (default "%Y-%m-%d %H:%M:%S"). An empty format or an
// unknown directive is an input error. now is the clock; nil means time.Now.
func CurrentDatetime(now func() time.Time) *Tool {
	const name = "get_current_datetime"
	if now == nil {
		now = time.Now
	}
	fn := func(_ context.Context, in datetimeInput) (string, error) {
		if in.DateFormat == "" {
			return "", newInputError(name, `property "date_format": must not be empty`)
		}
		s, err := strftime(now(), in.DateFormat)
		if err != nil {
			return "", newInputError(name, `property "date_format": `+err.Error())
		}
		return s, nil
	}
	return builtin(name, "Returns the current date and time in the local time zone.", fn, func(s *jsonschema.Schema) {
		s.Properties["date_format"].Default = mustJSON(defaultDateFormat)
	})
}

type calculatorInput struct {
	A         float64 `json:"a" jsonschema:"the first operand"`
	B         float64 `json:"b" jsonschema:"the second operand"`
	Operation string  `json:"operation,omitempty" jsonschema:"what to compute: a + b, a - b, a * b or a / b"`
}

// Calculator returns the tool "calculator", which adds, subtracts, multiplies
// or divides two numbers: its input is {"a": number, "b": number,
// "operation": "add" | "subtract" | "multiply" | "divide"}, where operation
// defaults to "add". The result is a float64. Division by zero, or a result
// too large for a float64, is an error.
func Calculator() *Tool {
	fn := func(_ context.Context, in calculatorInput) (float64, error) {
		var r float64
		switch in.Operation {
		case "add":
			r = in.A + in.B
		case "subtract":
			r = in.A - in.B
		case "multiply":
			r = in.A * in.B
		case "divide":
			if in.B == 0 {
				return 0, errors.New("division by zero")
			}
			r = in.A / in.B
		default: // the schema's enum keeps this out
			return 0, newInputError("calculator", `property "operation": unknown operation `+in.Operation)
		}
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return 0, errors.New("the result is too large to represent")
		}
		return r, nil
	}
	return builtin("calculator", "Adds, subtracts, multiplies or divides two numbers.", fn, func(s *jsonschema.Schema) {
		op := s.Properties["operation"]
		op.Enum = []any{"add", "subtract", "multiply", "divide"}
		op.Default = mustJSON("add")
	})
}

// Builtins returns new instances of all the built-in tools:
// CurrentDatetime(nil) and Calculator().
func Builtins() []*Tool {
	return []*Tool{CurrentDatetime(nil), Calculator()}
}

// builtin makes a typed tool whose inferred schema refine completes. The
// built-ins are tested, so making one cannot fail; if it did, the error
// would surface from Registry.Add and Call rather than as a panic. The
// built-ins have no side effects: they are speculative.
func builtin[In, Out any](name, description string, fn func(context.Context, In) (Out, error), refine func(*jsonschema.Schema)) *Tool {
	schema, err := inferSchema[In]()
	if err == nil {
		refine(schema)
		var t *Tool
		if t, err = newTyped(name, description, schema, fn, []func(*Options){func(o *Options) { o.Speculative = true }}); err == nil {
			return t
		}
	}
	return &Tool{name: name, description: description, err: err}
}

// mustJSON marshals a string, which cannot fail.
func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
