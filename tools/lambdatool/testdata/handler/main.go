// Command handler is the Lambda function of lambdatool's tests, built with
// aws-lambda-go and run by the Runtime Interface Emulator. Its input's mode
// says what to do.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type input struct {
	Mode string `json:"mode"`
	Text string `json:"text"`
	N    int    `json:"n"`
}

type output struct {
	Input  json.RawMessage   `json:"input"`
	Custom map[string]string `json:"custom"`
	Result string            `json:"result,omitempty"`
}

func handle(ctx context.Context, raw json.RawMessage) (*output, error) {
	var in input
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	lc, _ := lambdacontext.FromContext(ctx)
	out := &output{Input: raw}
	if lc != nil {
		out.Custom = lc.ClientContext.Custom
	}
	switch in.Mode {
	case "echo":
		out.Result = in.Text
	case "error":
		return nil, errors.New(in.Text)
	case "panic":
		panic(in.Text)
	case "block":
		// Until Lambda's deadline, and past it: the emulator times it out.
		<-ctx.Done()
		time.Sleep(time.Hour)
	case "barrier":
		// Arrives at the barrier in BARRIER_DIR and waits for in.N calls
		// to have arrived: it returns only if they run at once.
		dir := os.Getenv("BARRIER_DIR")
		if err := os.WriteFile(filepath.Join(dir, lc.AwsRequestID), nil, 0o644); err != nil {
			return nil, err
		}
		for {
			entries, err := os.ReadDir(dir)
			if err != nil {
				return nil, err
			}
			if len(entries) >= in.N {
				break
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
		out.Result = "all arrived"
	case "large":
		out.Result = strings.Repeat("x", in.N)
	default:
		return nil, errors.New("unknown mode " + in.Mode)
	}
	return out, nil
}

func main() {
	lambda.Start(handle)
}
