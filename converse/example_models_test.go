package converse_test

import (
	"fmt"

	"github.com/tooluse/bedrock/converse"
)

// What a model does with Options.Cache and a structured Send, as a
// CLI or a service tells its user before the first call.
func ExamplePromptCaching() {
	for _, model := range []string{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "us.amazon.nova-pro-v1:0", "us.meta.llama3-3-70b-instruct-v1:0"} {
		fmt.Println(model, converse.PromptCaching(model), converse.NativeStructuredOutput(model))
	}
	// Output:
	// us.anthropic.claude-sonnet-4-5-20250929-v1:0 true true
	// us.amazon.nova-pro-v1:0 true false
	// us.meta.llama3-3-70b-instruct-v1:0 false false
}
