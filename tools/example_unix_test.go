//go:build unix

package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tooluse/bedrock/tools"
)

func ExampleCommand() {
	// The program reads the input object on standard input; here wc counts
	// its bytes. Output that is valid JSON, like this number, is returned as
	// a json.RawMessage.
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	size, err := tools.Command("input_size", "Counts the bytes of the input.", schema, []string{"wc", "-c"})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := size.Call(context.Background(), json.RawMessage(`{"text":"hello"}`))
	fmt.Printf("%T %s %v\n", out, out, err)

	fail, err := tools.Command("fail", "Always fails.", json.RawMessage(`{"type":"object"}`),
		[]string{"sh", "-c", "echo 'no such record' >&2; exit 4"})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = fail.Call(context.Background(), nil)
	var exitErr *tools.ExitError
	fmt.Println(errors.As(err, &exitErr), exitErr.Code, err)
	// Output:
	// json.RawMessage 17 <nil>
	// true 4 exit status 4: no such record
}
