package recording_test

import (
	"fmt"

	"github.com/tooluse/bedrock/converse/recording"
)

func ExampleRedact() {
	body := `{"message":"... x-amz-security-token:IQoJb3JpZ2luX2VjEJr//wEaCXVz\n..."}`
	fmt.Println(recording.Redact(body))
	fmt.Println(recording.Redact("Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20250101/us-east-1/bedrock/aws4_request, Signature=5d672d79c15b1316"))
	// Output:
	// {"message":"... x-amz-security-token:[REDACTED]\n..."}
	// Authorization: [REDACTED]
}
