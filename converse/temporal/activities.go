package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/wirejson"
	"github.com/tooluse/bedrock/tools"
)

// ModelCall is the input of the model activity: a Step's ModelCall.
type ModelCall struct {
	// ModelID is the model to call: the ModelCall's (its Input.ModelId),
	// which the step API chose (the conversation's, PrepareTurn's or a
	// fallback model).
	ModelID string
	// Request is the request's body in Bedrock's wire JSON
	// (wirejson.MarshalRequest).
	Request json.RawMessage
	// Agent is the Name of the agent of Options.Agents that makes the
	// call, whose Client makes it; empty for the worker's conversation.
	Agent string `json:",omitempty"`
}

// ModelReply is the output of the model activity.
type ModelReply struct {
	// Response is the Converse response's body in Bedrock's wire JSON
	// (wirejson.MarshalResponse).
	Response json.RawMessage
}

// ToolCall is the input of the tool activity: one call of a Step.
type ToolCall struct {
	// ModelID is the conversation's model, whose status field and media
	// rules the result follows.
	ModelID string
	Call    converse.Call
	// Timeout, if positive, is the timeout of the tool's activity options
	// (see Options.ToolActivity). The call's timeout, in place of the
	// conversation's Tools.Timeout, is then a tenth of it (at most 10
	// seconds) less, so that it ends before the activity's. A tool's own
	// timeout still bounds the call.
	Timeout time.Duration
	// Agent is the Name of the agent of Options.Agents whose tool is
	// called; empty for the worker's registry.
	Agent string `json:",omitempty"`
}

// ToolReply is the output of the tool activity.
type ToolReply struct {
	// Result is the call's toolResult block, as the one block of a user
	// message in Bedrock's wire JSON (wirejson.MarshalMessages); empty
	// when Question is set.
	Result json.RawMessage
	// Question, if not nil, is what the tool asked the user instead of
	// answering (a *tools.InputRequiredError): the call waits for the
	// answer, and runs again with it.
	Question *tools.Question `json:",omitempty"`
	// Usage and CostUSD are what the tool reported with
	// converse.Caller.ReportUsage (an agent's, say), as converse.CallResult
	// carries them.
	Usage   converse.Usage
	CostUSD *float64 `json:",omitempty"`
}

// errorTypeModel is the type of a model call's failure that is not a
// Bedrock error.
const errorTypeModel = "converse.ModelCallFailed"

// Model is the model activity: it makes the call with converse.CallModel
// through the agent's client, with the SDK's retries off, in the chat span
// of the worker's telemetry. A failure is an ApplicationError whose type is
// Bedrock's error code (such as ThrottlingException), non-retryable when
// converse.Classify's outcome is not OutcomeRetry, with Bedrock's message
// as its detail.
func (a *Agent) Model(ctx context.Context, call ModelCall) (*ModelReply, error) {
	in, err := wirejson.UnmarshalRequest(call.Request)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("temporal: model call: "+err.Error(), errorTypeModel, nil)
	}
	if call.ModelID == "" {
		return nil, temporal.NewNonRetryableApplicationError("temporal: model call: no ModelID", errorTypeModel, nil)
	}
	in.ModelId = aws.String(call.ModelID)
	defer heartbeat(ctx)()
	out, err := converse.CallModel(ctx, noRetries{a.clientOf(call.Agent)}, in, a.activityOptions)
	if err != nil {
		return nil, modelFailure(err)
	}
	body, err := wirejson.MarshalResponse(out)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("temporal: model call: "+err.Error(), errorTypeModel, nil)
	}
	return &ModelReply{Response: body}, nil
}

// errorTypeCount is the type of a token count's failure that is not a
// Bedrock error.
const errorTypeCount = "converse.CountTokensFailed"

// tokenCounter is the CountTokens method of *bedrockruntime.Client.
type tokenCounter interface {
	CountTokens(ctx context.Context, params *bedrockruntime.CountTokensInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.CountTokensOutput, error)
}

// CountTokens is the count activity: it counts the input tokens of the
// Converse request of call with Bedrock's CountTokens API, through the
// agent's client, with the SDK's retries off. It answers the count. A
// client without a CountTokens method fails it, non-retryable; the
// workflow then estimates, as Send does. A Bedrock error fails it as the
// model activity's does.
func (a *Agent) CountTokens(ctx context.Context, call ModelCall) (int32, error) {
	in, err := wirejson.UnmarshalRequest(call.Request)
	if err != nil {
		return 0, temporal.NewNonRetryableApplicationError("temporal: count tokens: "+err.Error(), errorTypeCount, nil)
	}
	counter, ok := a.clientOf(call.Agent).(tokenCounter)
	if !ok {
		return 0, temporal.NewNonRetryableApplicationError("temporal: count tokens: the client has no CountTokens method", errorTypeCount, nil)
	}
	defer heartbeat(ctx)()
	out, err := counter.CountTokens(ctx, &bedrockruntime.CountTokensInput{
		ModelId: aws.String(call.ModelID),
		Input: &types.CountTokensInputMemberConverse{Value: types.ConverseTokensRequest{
			Messages: in.Messages, System: in.System, ToolConfig: in.ToolConfig,
			AdditionalModelRequestFields: in.AdditionalModelRequestFields,
		}},
	}, sdkOnce)
	if err != nil {
		return 0, modelFailure(err)
	}
	if out.InputTokens == nil {
		return 0, temporal.NewNonRetryableApplicationError("temporal: count tokens: no inputTokens in the answer", errorTypeCount, nil)
	}
	return *out.InputTokens, nil
}

// modelFailure is err, a model call's, as an ApplicationError that keeps
// what the workflow needs to rebuild it.
func modelFailure(err error) error {
	code, msg := errorTypeModel, err.Error()
	var api smithy.APIError
	if errors.As(err, &api) {
		code, msg = api.ErrorCode(), api.ErrorMessage()
	}
	if converse.Classify(err) == converse.OutcomeRetry {
		return temporal.NewApplicationError(err.Error(), code, msg)
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), code, nil, msg)
}

// bedrockErrors rebuild the Bedrock errors the loop branches on (a
// ValidationException reporting an overflow, say) from their code.
var bedrockErrors = map[string]func(msg *string) error{
	"ValidationException":           func(m *string) error { return &types.ValidationException{Message: m} },
	"AccessDeniedException":         func(m *string) error { return &types.AccessDeniedException{Message: m} },
	"ResourceNotFoundException":     func(m *string) error { return &types.ResourceNotFoundException{Message: m} },
	"ServiceQuotaExceededException": func(m *string) error { return &types.ServiceQuotaExceededException{Message: m} },
	"ThrottlingException":           func(m *string) error { return &types.ThrottlingException{Message: m} },
	"ModelTimeoutException":         func(m *string) error { return &types.ModelTimeoutException{Message: m} },
	"ModelNotReadyException":        func(m *string) error { return &types.ModelNotReadyException{Message: m} },
	"ModelErrorException":           func(m *string) error { return &types.ModelErrorException{Message: m} },
	"InternalServerException":       func(m *string) error { return &types.InternalServerException{Message: m} },
	"ServiceUnavailableException":   func(m *string) error { return &types.ServiceUnavailableException{Message: m} },
}

// bedrockError rebuilds the error of a failed model activity, as the
// workflow hands it to HandleResponse; a failure that is not Bedrock's (a
// timeout of the activity, say) stays as it is.
func bedrockError(err error) error {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) {
		return err
	}
	build, ok := bedrockErrors[app.Type()]
	if !ok {
		return err
	}
	var msg string
	if app.HasDetails() {
		_ = app.Details(&msg)
	}
	return build(aws.String(msg))
}

// Tool is the tool activity. It runs one call as Send would, with the
// Executor of the call's model (converse.NewExecutor: its status field and
// media rules). tools.CallID(ctx) is the call's toolUseId, and call.Timeout,
// if set, its timeout. A tool that fails is an error result, not an error of
// the activity. A tool that asks the user a question (a
// *tools.InputRequiredError) replies with the question; the call's Answer,
// once the user gave one, reaches the tool through tools.AnswerOf. The usage
// the tool reports with converse.Caller.ReportUsage is in the reply. An activity
// runs at least once: if its worker dies before Temporal records the
// result, the call runs again on another worker. So a tool with side
// effects should use tools.CallID as its idempotency key.
func (a *Agent) Tool(ctx context.Context, call ToolCall) (*ToolReply, error) {
	defer heartbeat(ctx)()
	// An Executor of its own per call: the per-workflow bound is the
	// workflow's, the per-worker bound the worker's
	// (MaxConcurrentActivityExecutionSize).
	reg, opts, err := a.conversationOf(call.Agent)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "converse.ToolCall", nil)
	}
	exec := converse.NewExecutor(call.ModelID, reg, opts, func(o *converse.Options) {
		o.Session = nil // the workflow's state is Temporal's
		if call.Timeout > 0 {
			o.Tools.Timeout = call.Timeout - min(call.Timeout/10, 10*time.Second)
		}
	})
	ran := exec.Run(ctx, call.Call)
	if err := ctx.Err(); err != nil {
		return nil, err // the worker is stopping: another attempt runs the call
	}
	reply, err := toolReply(ran)
	if err == nil {
		err = a.tooLarge("tool result", reply)
	}
	var over *payloadError
	if errors.As(err, &over) {
		// A retry would run the tool again, and its result would be as large.
		activity.GetLogger(ctx).Warn(over.Error(), "tool", call.Call.Tool, "toolUseId", call.Call.ID)
		ran.Result, ran.Question = errorResult(call.Call, "Error: "+over.reason()+". The tool ran, and is not run again."), nil
		reply, err = toolReply(ran)
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("temporal: tool result: "+err.Error(), "converse.ToolResult", nil)
	}
	return reply, nil
}

// toolReply is the reply carrying ran: its toolResult, or its question.
func toolReply(ran converse.CallResult) (*ToolReply, error) {
	reply := &ToolReply{Question: ran.Question, Usage: ran.Usage, CostUSD: ran.CostUSD}
	if ran.Question != nil {
		return reply, nil
	}
	body, err := wirejson.MarshalMessages([]types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{ran.Result}}})
	if err != nil {
		return nil, err
	}
	reply.Result = body
	return reply, nil
}

// activityOptions are the converse options in an activity: the agent's,
// without a session (the workflow's state is Temporal's).
func (a *Agent) activityOptions(o *converse.Options) {
	*o = a.conversationOptions()
	o.Session = nil
}

// resultOf reads a tool activity's reply to call: its toolResult block,
// or its question, and the usage its tool reported.
func resultOf(call converse.Call, r *ToolReply) (converse.CallResult, error) {
	ran := converse.CallResult{ID: call.ID, Question: r.Question, Usage: r.Usage, CostUSD: r.CostUSD}
	if r.Question != nil {
		return ran, nil
	}
	msgs, err := wirejson.UnmarshalMessages(r.Result)
	if err != nil {
		return ran, err
	}
	if len(msgs) == 1 && len(msgs[0].Content) == 1 {
		if b, ok := msgs[0].Content[0].(*types.ContentBlockMemberToolResult); ok && aws.ToString(b.Value.ToolUseId) == call.ID {
			ran.Result = b
			return ran, nil
		}
	}
	return ran, fmt.Errorf("not one toolResult block answering %q", call.ID)
}

// failedResult answers a call whose activity failed for good.
func failedResult(call converse.Call, err error) converse.CallResult {
	return converse.CallResult{ID: call.ID, Result: errorResult(call, "Error: the call failed: "+err.Error())}
}

// errorResult answers call with an error result of text.
func errorResult(call converse.Call, text string) types.ContentBlock {
	return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: aws.String(call.ID),
		Status:    types.ToolResultStatusError,
		Content:   []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: text}},
	}}
}

// heartbeat records a heartbeat of the activity of ctx every third of its
// heartbeat timeout, if it has one, until stop is called. A worker that
// dies is then noticed at that timeout, not at the end of the call's.
func heartbeat(ctx context.Context) (stop func()) {
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// noRetries is a client whose calls the SDK makes once: Temporal owns the
// retries. The retryer is replaced before the call's own options apply,
// so that a quota.Limiter's, which wraps the retryer to see each
// throttled attempt, wraps this one.
type noRetries struct{ converse.Client }

func (n noRetries) Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
	return n.Client.Converse(ctx, in, append([]func(*bedrockruntime.Options){sdkOnce}, optFns...)...)
}

// sdkOnce has the SDK make a call once: Temporal owns the retries.
func sdkOnce(o *bedrockruntime.Options) { o.Retryer = aws.NopRetryer{} }
