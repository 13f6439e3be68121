package converse_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// everyField sets each request field that Options holds.
func everyField(o *converse.Options) {
	o.Request.AdditionalModelRequestFields = document.NewLazyDocument(map[string]any{"top_k": 5})
	o.Request.AdditionalModelResponseFieldPaths = []string{"/stop_sequence"}
	o.Request.GuardrailConfig = &types.GuardrailConfiguration{
		GuardrailIdentifier: aws.String("gr-1"), GuardrailVersion: aws.String("2"), Trace: types.GuardrailTraceEnabled}
	o.Request.PerformanceConfig = &types.PerformanceConfiguration{Latency: types.PerformanceConfigLatencyOptimized}
	o.Request.ServiceTier = &types.ServiceTier{Type: types.ServiceTierTypeFlex}
	o.Request.RequestMetadata = map[string]string{"team": "search"}
	o.Request.ProjectIdentifier = aws.String("proj-1")
	o.Request.PromptVariables = map[string]types.PromptVariableValues{"city": &types.PromptVariableValuesMemberText{Value: "Oslo"}}
	o.Request.OutputConfig = &types.OutputConfig{TextFormat: &types.OutputFormat{
		Type:      types.OutputFormatTypeJsonSchema,
		Structure: &types.OutputFormatStructureMemberJsonSchema{Value: types.JsonSchemaDefinition{Name: aws.String("answer"), Schema: aws.String(`{"type":"object","additionalProperties":false}`)}},
	}}
}

// asyncGuardrail streams, when stream is set, with the guardrail checking
// the stream asynchronously.
func asyncGuardrail(stream bool) *converse.StreamPolicy {
	if !stream {
		return nil
	}
	return &converse.StreamPolicy{GuardrailMode: types.GuardrailStreamProcessingModeAsync}
}

func TestEveryRequestFieldReachesTheWire(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "Converse", true: "ConverseStream"}[stream], func(t *testing.T) {
			srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("ok")))
			_, err := converse.New(client, claude, nil, everyField, func(o *converse.Options) { o.Stream = asyncGuardrail(stream) }).Send(context.Background(), "hi")
			require.NoError(t, err)
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			r := reqs[0]
			top, err := r.AdditionalModelRequestFields.MarshalSmithyDocument()
			require.NoError(t, err)
			assert.JSONEq(t, `{"top_k":5}`, string(top))
			assert.Equal(t, []string{"/stop_sequence"}, r.AdditionalModelResponseFieldPaths)
			require.NotNil(t, r.GuardrailConfig)
			assert.Equal(t, "gr-1", aws.ToString(r.GuardrailConfig.GuardrailIdentifier))
			assert.Equal(t, "2", aws.ToString(r.GuardrailConfig.GuardrailVersion))
			assert.Equal(t, types.GuardrailTraceEnabled, r.GuardrailConfig.Trace)
			if stream {
				assert.Contains(t, string(r.Body), `"streamProcessingMode":"async"`)
			} else {
				assert.NotContains(t, string(r.Body), `streamProcessingMode`)
			}
			require.NotNil(t, r.PerformanceConfig)
			assert.Equal(t, types.PerformanceConfigLatencyOptimized, r.PerformanceConfig.Latency)
			require.NotNil(t, r.ServiceTier)
			assert.Equal(t, types.ServiceTierTypeFlex, r.ServiceTier.Type)
			assert.Equal(t, map[string]string{"team": "search"}, r.RequestMetadata)
			assert.Equal(t, "proj-1", aws.ToString(r.ProjectIdentifier))
			require.Contains(t, r.PromptVariables, "city")
			assert.Equal(t, &types.PromptVariableValuesMemberText{Value: "Oslo"}, r.PromptVariables["city"])
			require.NotNil(t, r.OutputConfig)
			js, ok := r.OutputConfig.TextFormat.Structure.(*types.OutputFormatStructureMemberJsonSchema)
			require.True(t, ok)
			assert.Equal(t, "answer", aws.ToString(js.Value.Name))
			assert.JSONEq(t, `{"type":"object","additionalProperties":false}`, aws.ToString(js.Value.Schema))
		})
	}
}

// guardrailBlocked is the answer of a guardrail that intervened, with its
// trace and the response fields Bedrock adds.
func guardrailBlocked() *bedrocktest.Reply {
	r := bedrocktest.Output(types.StopReasonGuardrailIntervened,
		&types.ContentBlockMemberText{Value: "Sorry, I cannot help with that."})
	r.Output.Trace = &types.ConverseTrace{Guardrail: &types.GuardrailTraceAssessment{
		InputAssessment: map[string]types.GuardrailAssessment{"gr-1": {
			TopicPolicy: &types.GuardrailTopicPolicyAssessment{Topics: []types.GuardrailTopic{{
				Name: aws.String("investing"), Type: types.GuardrailTopicTypeDeny, Action: types.GuardrailTopicPolicyActionBlocked,
			}}},
		}},
	}}
	r.Output.Metrics = &types.ConverseMetrics{LatencyMs: aws.Int64(42)}
	r.Output.ServiceTier = &types.ServiceTier{Type: types.ServiceTierTypePriority}
	r.Output.PerformanceConfig = &types.PerformanceConfiguration{Latency: types.PerformanceConfigLatencyOptimized}
	r.Output.AdditionalModelResponseFields = document.NewLazyDocument(map[string]any{"stop_sequence": "END"})
	return r
}

func TestGuardrailInterventionEndsTheSendWithItsTrace(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "Converse", true: "ConverseStream"}[stream], func(t *testing.T) {
			_, client := serve(t, bedrocktest.Script(guardrailBlocked()))
			var ends []converse.TurnEnd
			c := converse.New(client, claude, calculator(t), everyField, func(o *converse.Options) {
				o.Stream = asyncGuardrail(stream)
				o.OnEvent = func(ev converse.Event) {
					if e, ok := ev.(converse.TurnEnd); ok {
						ends = append(ends, e)
					}
				}
			})
			res, err := c.Send(context.Background(), "Which stocks should I buy?")
			require.NoError(t, err)
			assert.Equal(t, types.StopReasonGuardrailIntervened, res.StopReason)
			assert.Equal(t, "Sorry, I cannot help with that.", res.Text)
			require.NotNil(t, res.Trace)
			require.NotNil(t, res.Trace.Guardrail)
			topic := res.Trace.Guardrail.InputAssessment["gr-1"].TopicPolicy.Topics[0]
			assert.Equal(t, types.GuardrailTopicPolicyActionBlocked, topic.Action)
			assert.Equal(t, int64(42), aws.ToInt64(res.Metrics.LatencyMs))
			assert.Equal(t, types.ServiceTierTypePriority, res.ServiceTier.Type)
			assert.Equal(t, types.PerformanceConfigLatencyOptimized, res.PerformanceConfig.Latency)
			fields, err := res.AdditionalModelResponseFields.MarshalSmithyDocument()
			require.NoError(t, err)
			assert.JSONEq(t, `{"stop_sequence":"END"}`, string(fields))
			require.Len(t, ends, 1)
			assert.Equal(t, res.Response, ends[0].Response)
			// The blocked exchange is kept: the conversation goes on.
			assert.Len(t, c.History(), 2)
		})
	}
}
