package main

import (
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
)

func TestRequestFlags(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		want    converse.Options
		wantErr string
	}{
		{args: []string{"-guardrail", "arn:aws:bedrock:us-east-1:123:guardrail/gr1:DRAFT", "-service-tier", "flex", "-latency", "optimized"},
			want: converse.Options{Request: bedrockruntime.ConverseInput{
				GuardrailConfig: &types.GuardrailConfiguration{GuardrailIdentifier: aws.String("arn:aws:bedrock:us-east-1:123:guardrail/gr1"),
					GuardrailVersion: aws.String("DRAFT"), Trace: types.GuardrailTraceEnabled},
				ServiceTier:       &types.ServiceTier{Type: types.ServiceTierTypeFlex},
				PerformanceConfig: &types.PerformanceConfiguration{Latency: types.PerformanceConfigLatencyOptimized},
			}}},
		{args: nil},
		{args: []string{"-guardrail", "gr1"}, wantErr: "want ID:VERSION"},
		{args: []string{"-guardrail", "gr1:"}, wantErr: "want ID:VERSION"},
		{args: []string{"-service-tier", "fast"}, wantErr: "want one of priority, default, flex"},
		{args: []string{"-latency", "fast"}, wantErr: "want one of standard, optimized"},
	} {
		t.Run(tt.wantErr, func(t *testing.T) {
			s, err := promptCommand.parse(append(tt.args, "hi"), io.Discard)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var got converse.Options
			s.request.apply(&got)
			assert.Equal(t, tt.want, got)
		})
	}
}
