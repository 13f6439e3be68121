package converse

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/media"
	"github.com/tooluse/bedrock/converse/internal/wire"
)

// errorText is the text of an error result: never empty, always starting
// with "Error:", as Bedrock rejects error results without content. It calls
// err.Error(), so for an error a tool returned it must run where a panic is
// recovered (see invoke).
func errorText(err error) string {
	msg := strings.TrimSpace(err.Error())
	if msg == "" {
		msg = "the tool failed without saying why"
	}
	return "Error: " + msg
}

// outputProblem says, for the model, why json.Marshal rejected a tool's
// output: encoding/json's own texts start with "json: " and name Go types.
// It calls the Error method of the tool's MarshalJSON error, so it must run
// where a panic is recovered (see invoke).
func outputProblem(err error) string {
	var value *json.UnsupportedValueError
	var typ *json.UnsupportedTypeError
	var marshaler *json.MarshalerError
	switch {
	case errors.As(err, &value):
		return "unsupported value " + value.Str
	case errors.As(err, &typ):
		return "it holds a value JSON cannot represent, such as a function, a channel or a complex number"
	case errors.As(err, &marshaler):
		return "its MarshalJSON method failed: " + strings.TrimPrefix(marshaler.Unwrap().Error(), "json: ")
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// describe is fmt's %v of a value that came from a tool, such as a panic
// value, recovering a panic of its String or Error method. The text is made
// once and only the text is kept.
func describe(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = "(a value whose text cannot be read)"
		}
	}()
	return fmt.Sprint(v)
}

// truncate cuts text to at most limit bytes, on a rune boundary, and says so
// at the end. It reports whether it cut. It takes bytes too, so that a large
// output is never copied whole.
func truncate[T ~string | ~[]byte](text T, limit int) (string, bool) {
	if len(text) <= limit {
		return string(text), false
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… [truncated: %d bytes, first %d kept]", text[:cut], len(text), cut), true
}

// jsonObject makes a document of a JSON value, wrapping a non-object as
// {"result": value} because a json content block must be an object.
func jsonObject(raw json.RawMessage) document.Interface {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		v = string(raw)
	}
	if m, ok := v.(map[string]any); ok {
		return wire.Encoded(document.NewLazyDocument(m))
	}
	return wire.Encoded(document.NewLazyDocument(map[string]any{"result": v}))
}

// finish turns an outcome into a toolResult block and reports it.
func (e *Executor) finish(turn int, c toolCall, out outcome) types.ContentBlock {
	limit := out.limit
	if limit <= 0 {
		limit = e.maxOutput()
	}
	status := types.ToolResultStatusSuccess
	var content types.ToolResultContentBlock
	var truncated bool
	switch {
	case out.err != nil:
		status = types.ToolResultStatusError
		msg := out.text
		if msg == "" {
			msg = errorText(out.err)
		}
		msg, truncated = truncate(msg, limit)
		content = &types.ToolResultContentBlockMemberText{Value: msg}
	case len(out.output) > limit: // cut JSON is no JSON: it goes as text
		msg, _ := truncate(out.output, limit)
		truncated = true
		content = &types.ToolResultContentBlockMemberText{Value: msg}
	case out.output == nil: // a tools.Result of media only
	case e.JSONContent && len(out.media) == 0:
		content = &types.ToolResultContentBlockMemberJson{Value: jsonObject(out.output)}
	default:
		content = &types.ToolResultContentBlockMemberText{Value: string(out.output)}
	}
	var blocks []types.ToolResultContentBlock
	if content != nil {
		blocks = append(blocks, content)
	}
	mediaBlocks, infos := media.Content(e.media, out.media)
	blocks = append(blocks, mediaBlocks...)
	if e.OnEvent != nil {
		e.emit(ToolEnd{Turn: turn, ID: c.id, Name: c.name, Input: c.input, Output: out.output, Media: mediaInfos(infos),
			Err: out.err, Status: status, Duration: out.duration, Truncated: truncated, Abandoned: out.abandoned})
	}
	block := types.ToolResultBlock{ToolUseId: aws.String(c.id), Content: blocks}
	if e.sendsStatus() {
		block.Status = status
	}
	return &types.ContentBlockMemberToolResult{Value: block}
}
