package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tooluse/bedrock/tools"
)

type benchArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

func benchAdd(_ context.Context, in benchArgs) (int, error) { return in.A + in.B, nil }

// BenchmarkCall measures what a typed tool does with the model's input
// before its function runs (check, defaults, validation, decoding), next to
// a bare json.Unmarshal into the arguments (impl=naive), and next to that
// unmarshal after jsonschema-go's check of the input (impl=validated).
func BenchmarkCall(b *testing.B) {
	tool, err := tools.New("add", "Adds a and b.", benchAdd)
	if err != nil {
		b.Fatal(err)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(tool.InputSchema(), &schema); err != nil {
		b.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		b.Fatal(err)
	}
	input := json.RawMessage(`{"a":1,"b":7}`)
	ctx := context.Background()
	b.Run("impl=naive", func(b *testing.B) {
		for b.Loop() {
			var in benchArgs
			if err := json.Unmarshal(input, &in); err != nil {
				b.Fatal(err)
			}
			if _, err := benchAdd(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=validated", func(b *testing.B) {
		for b.Loop() {
			var v any
			if err := json.Unmarshal(input, &v); err != nil {
				b.Fatal(err)
			}
			if err := resolved.Validate(v); err != nil {
				b.Fatal(err)
			}
			var in benchArgs
			if err := json.Unmarshal(input, &in); err != nil {
				b.Fatal(err)
			}
			if _, err := benchAdd(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=library", func(b *testing.B) {
		for b.Loop() {
			if _, err := tool.Call(ctx, input); err != nil {
				b.Fatal(err)
			}
		}
	})
}
