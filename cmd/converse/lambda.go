package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/lambdatool"
)

// functions makes the manifest tools that name a Lambda function. They share
// one Lambda client, made from the configuration the flags ask for (-region,
// -profile) and the SDK's standard settings (AWS_ENDPOINT_URL_LAMBDA aims it
// at an emulator), when the first is made. A nil *functions makes none.
type functions struct {
	client func() (*lambda.Client, error)
	logger *slog.Logger      // hints such as what to check when access is denied
	made   map[string]string // the tools made, by name: their functions
	// bedrock is the client of the manifest's agents (see agent.go).
	bedrock lateClient
}

// newFunctions returns the functions of a run: its hints go to stderr.
func newFunctions(s *settings, stderr io.Writer) *functions {
	return &functions{
		// Loading reads files and the environment, not the network:
		// credentials are fetched when the first call is signed.
		client: sync.OnceValues(func() (*lambda.Client, error) {
			cfg, err := loadConfig(context.Background(), s)
			if err != nil {
				return nil, err
			}
			// Request bodies with Read and Close only, as Bedrock's
			// client has them (newClient): on loopback, an emulator's,
			// the SDK otherwise drops a connection now and then and its
			// retryer invokes the function a second time.
			return lambda.NewFromConfig(cfg, func(o *lambda.Options) { o.HTTPClient = recording.PlainBodies(cfg.HTTPClient) }), nil
		}),
		logger: slog.New(slog.NewTextHandler(stderr, nil)),
	}
}

// tool makes the tool of a manifest entry that names a function.
func (f *functions) tool(mt manifestTool, schema []byte, opts func(*tools.Options)) (*tools.Tool, error) {
	if f == nil {
		return nil, errors.New(`"lambda" tools need the AWS configuration, which this run does not have`)
	}
	client, err := f.client()
	if err != nil {
		return nil, err
	}
	fn := lambdatool.Function{Name: mt.Lambda, Qualifier: mt.Qualifier, Logger: f.logger}
	if f.made == nil {
		f.made = map[string]string{}
	}
	f.made[mt.Name] = mt.Lambda
	return lambdatool.NewRaw(client, fn, mt.Name, mt.Description, schema, opts)
}
