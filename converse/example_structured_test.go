package converse_test

import (
	"context"
	"fmt"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

type invoice struct {
	Vendor string  `json:"vendor"`
	Total  float64 `json:"total" jsonschema:"the total in euros"`
}

// A typed answer, offline. Amazon Nova has no native structured output, so
// the model answers by calling the final tool final_invoice; its first call
// fails the schema, and the model corrects it.
func ExampleStructured() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t1", Name: "final_invoice", Input: map[string]any{"vendor": "ACME", "total": "12 EUR"}}),
		bedrocktest.ToolUse("", bedrocktest.Call{ID: "t2", Name: "final_invoice", Input: map[string]any{"vendor": "ACME", "total": 12.5}}),
	))
	defer srv.Close()

	conv := converse.New(srv.Client(), "us.amazon.nova-pro-v1:0", nil)
	inv, res, err := converse.Structured[invoice](context.Background(), conv, "ACME billed us 12.50 EUR. Extract the invoice.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v in %d turns\n", inv, res.Turns)
	fmt.Println(res.Text)
	// Output:
	// {Vendor:ACME Total:12.5} in 2 turns
	// {"total":12.5,"vendor":"ACME"}
}
