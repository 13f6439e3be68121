package evaltest_test

import (
	"errors"
	"flag"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// update re-records the judge's and the simulated user's calls of the
// examples (go test -run Example -update). There is no live model in this
// repository's tests: a bedrocktest script stands in for it, playing what a
// model answered.
var update = flag.Bool("update", false, "re-record the model calls of the judge and the simulated user in testdata/eval")

// live is the model a recording is made with: with -update, a bedrocktest
// server answering with replies; without, none, as the recording is used.
func live(replies ...*bedrocktest.Reply) func() (*bedrockruntime.Client, error) {
	return func() (*bedrockruntime.Client, error) {
		if !*update {
			return nil, errors.New("no recording in testdata/eval: run go test -update")
		}
		srv := bedrocktest.NewServer(bedrocktest.Script(replies...))
		// The server lives until the test binary exits: the recording's
		// client needs it until then.
		return srv.Client(), nil
	}
}
