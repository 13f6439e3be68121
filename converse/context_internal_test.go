package converse

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
)

func TestOverflowed(t *testing.T) {
	ve := func(msg string) error {
		return fmt.Errorf("turn 2: %w", &types.ValidationException{Message: aws.String(msg)})
	}
	for _, tt := range []struct {
		err  error
		stop types.StopReason
		want bool
	}{
		{err: ve("Input is too long for requested model."), want: true},
		{err: ve("The model returned the following errors: prompt is too long: 210000 tokens > 200000 maximum"), want: true},
		{err: ve("The model returned the following errors: input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000"), want: true},
		{err: ve("messages.0.content: too long"), want: false},
		{err: &types.ThrottlingException{Message: aws.String("Input is too long for requested model.")}, want: false},
		{stop: types.StopReasonModelContextWindowExceeded, want: true},
		{stop: types.StopReasonEndTurn, want: false},
	} {
		assert.Equal(t, tt.want, overflowed(tt.err, &turnResult{stop: tt.stop}), "%v %s", tt.err, tt.stop)
	}
}
