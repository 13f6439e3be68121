package bedrocktest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/bedrocktest"
)

func Example() {
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("Let me look that up.", bedrocktest.Call{
			ID: "tooluse_1", Name: "get_weather", Input: map[string]any{"city": "Paris"},
		}),
		bedrocktest.Text("It is sunny in Paris."),
	))
	defer srv.Close()

	client := srv.Client()
	out, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId: aws.String("anthropic.claude-3-5-sonnet-20240620-v1:0"),
		Messages: []types.Message{{
			Role:    types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "What is the weather in Paris?"}},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.StopReason)
	// Output: tool_use
}

func ExampleThrottle() {
	// Two throttled attempts, then the answer: the SDK's default retryer
	// makes three attempts, so the call succeeds.
	srv := bedrocktest.NewServer(bedrocktest.Throttle(2, bedrocktest.Script(bedrocktest.Text("Hello!"))))
	defer srv.Close()

	out, err := srv.Client().Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId: aws.String("us.amazon.nova-lite-v1:0"),
		Messages: []types.Message{{
			Role:    types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.StopReason, len(srv.Requests()))
	// Output: end_turn 3
}

// An in-process server answers through the real SDK client without a
// socket, so a test in a testing/synctest bubble sees a model's latency,
// here a tenth of a second, pass in virtual time.
func ExampleNewInProcessServer() {
	reply := bedrocktest.Text("Hello.")
	reply.Latency = 100 * time.Millisecond // before the answer
	srv := bedrocktest.NewInProcessServer(bedrocktest.Script(reply))
	defer srv.Close()

	start := time.Now()
	out, err := srv.Client().Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId:  aws.String("anthropic.claude-3-5-sonnet-20240620-v1:0"),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hi"}}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.StopReason, time.Since(start) >= reply.Latency)
	// Output: end_turn true
}
