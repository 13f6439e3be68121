package quota_test

import (
	"context"
	"fmt"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/quota"
)

func ExampleLimiter_Client() {
	// One throttled attempt, then the answer: the SDK's retryer makes the
	// call again, and the Limiter, which saw the throttle, halves its rates.
	srv := bedrocktest.NewServer(bedrocktest.Throttle(1, bedrocktest.Script(bedrocktest.Text("Hello!"))))
	defer srv.Close()

	lim := quota.NewLimiter(400, 200000) // shared by every conversation of this model and region
	res, err := converse.New(lim.Client(srv.Client()),
		"anthropic.claude-3-haiku-20240307-v1:0", nil).Send(context.Background(),
		"Hi")

	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text, lim.Throttles())
	// Output: Hello! 1
}
