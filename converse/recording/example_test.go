package recording_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

// Record a call to a scripted Server, then serve the same call from the
// recording, in process: in a real program, the recording is made once
// against Bedrock and kept in testdata/.
func ExampleNewReplayer() {
	ctx := context.Background()
	input := &bedrockruntime.ConverseInput{
		ModelId:  aws.String("anthropic.claude-3-5-haiku-20241022-v1:0"),
		Messages: []types.Message{userMessage("Say hello.")},
	}

	live := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hello!")))
	recorder := recording.NewRecorder(live.HTTPClient())
	client := live.Client(func(o *bedrockruntime.Options) { o.HTTPClient = recorder })
	if _, err := client.Converse(ctx, input); err != nil {
		fmt.Println(err)
	}
	live.Close()

	replayer := recording.NewReplayer(recorder.Recording())
	out, err := replayer.Client().Converse(ctx, input) // no AWS configuration needed
	if err != nil {
		fmt.Println(err)
		return
	}
	msg := out.Output.(*types.ConverseOutputMemberMessage).Value
	fmt.Println(msg.Content[0].(*types.ContentBlockMemberText).Value)
	fmt.Println(replayer.Unused())
	// Output:
	// Hello!
	// <nil>
}
