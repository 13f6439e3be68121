package wire

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// DocumentNames lists the names of the document blocks of msgs, at the top
// level of a message and inside its toolResult blocks, in order; a document
// without a name counts as "".
func DocumentNames(msgs ...types.Message) []string {
	var names []string
	for _, msg := range msgs {
		for _, block := range msg.Content {
			switch b := block.(type) {
			case *types.ContentBlockMemberDocument:
				names = append(names, aws.ToString(b.Value.Name))
			case *types.ContentBlockMemberToolResult:
				for _, c := range b.Value.Content {
					if d, ok := c.(*types.ToolResultContentBlockMemberDocument); ok {
						names = append(names, aws.ToString(d.Value.Name))
					}
				}
			}
		}
	}
	return names
}
