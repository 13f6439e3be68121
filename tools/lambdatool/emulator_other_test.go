//go:build !linux

package lambdatool_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

const emulatorFunction = "function"

type emulator struct{ URL string }

// startEmulator skips: the Lambda Runtime Interface Emulator runs on Linux
// only.
func startEmulator(t *testing.T, _ ...string) *emulator {
	t.Skip("the AWS Lambda Runtime Interface Emulator runs on Linux only: these tests run there")
	return nil
}

func (e *emulator) client() *lambda.Client { return newClient(e.URL) }
