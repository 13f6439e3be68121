// Demo replays a recorded tool-use conversation offline, through the
// library, and prints it as converse -replay -v does: it is what make demo
// runs. It builds only what a replay needs (not the CLI's MCP, AWS
// services and OpenTelemetry exporters), so a first make demo, with an
// empty build cache, takes a fraction of the time of building converse.
//
// Usage:
//
//	go run ./cmd/converse/internal/demo RECORDING PROMPT
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/cmd/converse/internal/printing"
	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

// run replays the recording args[0] with the prompt args[1]: the text on
// stdout, the trace on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) != 2 {
		return errors.New("usage: demo RECORDING PROMPT")
	}
	rec, err := recording.Load(args[0])
	if err != nil {
		return err
	}
	if len(rec.Exchanges) == 0 {
		return fmt.Errorf("%s: no exchanges", args[0])
	}
	reg, err := tools.NewRegistry(tools.Builtins()...)
	if err != nil {
		return err
	}
	// A replay needs no account: the credentials only let the client sign.
	client := bedrockruntime.New(bedrockruntime.Options{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDREPLAY", "replay", ""),
		HTTPClient:  recording.PlainBodies(recording.NewReplayer(rec)),
	})
	model := rec.Exchanges[0].ModelID
	p := &printing.Printer{Stdout: stdout, Trace: trace.New(stderr)}
	conv := converse.New(client, model, reg, func(o *converse.Options) {
		o.OnEvent = p.Event
		if rec.Exchanges[0].Operation == recording.OpConverseStream {
			o.Stream = &converse.StreamPolicy{} // replay the way it was recorded
		}
	})
	p.Replaying(model, args[0])
	p.Prompt(args[1])
	res, err := conv.Send(ctx, args[1])
	p.EndText()
	if res != nil {
		p.Total(res)
	}
	return err
}
