package bedrocktest

import (
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/wire"
)

// OpCountTokens is the Operation of a CountTokens request in Requests.
const OpCountTokens = "CountTokens"

// tooLongInput is Bedrock's answer to an input larger than the model's context
// window.
func tooLongInput() *Error {
	return Validation("Input is too long for requested model.")
}

// overWindow reports whether req is larger than Options.MaxInputTokens.
func (s *Server) overWindow(req *Request) bool {
	return s.opts.MaxInputTokens > 0 && EstimateTokens(req) > s.opts.MaxInputTokens
}

// serveCountTokens answers a CountTokens request for a Converse input with
// EstimateTokens, as Bedrock answers with the model's count. The request
// is validated as a Converse request would be. One over MaxInputTokens is
// refused as Converse would refuse it.
func (s *Server) serveCountTokens(w http.ResponseWriter, r *http.Request, modelID string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client is gone
	}
	req := &Request{Operation: OpCountTokens, Body: body, ConverseInput: bedrockruntime.ConverseInput{ModelId: aws.String(modelID)}}
	in, err := wire.DecodeCountTokensInput(body)
	if err == nil {
		req.Messages, req.System, req.ToolConfig = in.Messages, in.System, in.ToolConfig
	}
	if !s.admit(w, r, req, err) {
		return
	}
	out, err := wire.EncodeCountTokensOutput(int32(EstimateTokens(req)))
	if err != nil {
		writeError(w, setupErrorf("%v", err))
		return
	}
	w.Header().Set("Content-Type", wire.ContentTypeJSON)
	w.Header().Set("Content-Length", fmt.Sprint(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// ContextWindowExceeded returns a reply with stop reason
// model_context_window_exceeded and no text, as a model that ran out of
// context window while generating answers.
func ContextWindowExceeded() *Reply {
	return Output(types.StopReasonModelContextWindowExceeded, &types.ContentBlockMemberText{Value: "…"})
}
