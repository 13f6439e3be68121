package converse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/tools"
)

// ErrInvalidAnswer means a structured Send (Structured, StructuredJSON) ended
// without an answer that matches the schema. The turn limit may have been
// reached while the answer stayed invalid (the error then matches ErrMaxTurns
// too). Or the model stopped for a reason it cannot be asked to correct:
// guardrail_intervened, content_filtered, or max_tokens in a text answer. An
// answer cut off by max_tokens inside the final tool's call is ErrMaxTokens,
// as any cut-off call is.
var ErrInvalidAnswer = errors.New("the answer does not match the schema")

// finalDescription is the description of the final tool.
const finalDescription = "Gives the final answer. Call it once you have the answer, with the answer as its input; it is the only way to answer."

// Structured sends prompt and runs the conversation, tools and all, until the
// model answers with a value of type T, which it returns with the Result. T's
// JSON Schema is inferred as tools.New infers a tool's input (T must be a
// struct or a map with string keys). The answer is validated against it and
// decoded like a tool's input, defaults filled in.
//
// The model is asked for the schema in one of three ways, decided for each
// request from the model it goes to: New's, Options.PrepareTurn's or an
// CallPolicy.Fallback one's. The table is in the internal models package, with
// its source. The models whose Converse takes outputConfig.textFormat (Claude
// Sonnet 4.5, Haiku 4.5, Opus 4.5 and 4.6) get the schema there, and their
// final text is the answer. Bedrock takes only closed object schemas there. So
// every object schema that leaves additionalProperties out is sent with
// "additionalProperties": false. One that sets it to anything else, such as a
// map type's schema, takes the final tool; it fails the Send before any model
// call when New's model is one of them. The other models get a final tool,
// named final_ and T's name (final_answer for an unnamed type), and toolChoice
// any. So do those models when the request holds a document or search result
// with citations enabled, which structured outputs are incompatible with. They
// may call other tools first but can only end by calling the final tool.
// Bedrock rejects toolChoice any on a model without it, such as Llama, and on
// Claude with extended thinking enabled in
// Options.Request.AdditionalModelRequestFields. There the final tool is
// offered with the default choice, and a line added to the system prompt tells
// the model to answer by calling it. A reply is checked in the form its
// request asked for. An answer that fails the schema (or, on the final tool's
// path, a text answer) is sent back as an error ("Error: the answer does not
// match the schema: ..."). The model then answers again, within
// Options.MaxTurns. A reply of reasoning alone is dropped and the model asked
// again. Options.PrepareTurn sees a turn as a plain Send's: the final tool,
// its choice and the schema are added to the request after it, for the model
// it picks, and replace Options.ToolChoice on the final tool's path.
//
// The kept history is a valid Bedrock conversation ending with the answer.
// On the final tool's path its call is kept as a text block holding its
// input, the answer's JSON. The other calls of that turn are not run (they
// are dropped, like the calls of a final answer). Its rejected
// calls stay, answered with their errors; a later Send on a conversation
// without tools describes the final tool to Bedrock as withdrawn, since
// Bedrock wants a toolConfig with tool blocks. The final tool's calls are
// reported as any call is (ToolStart, ToolEnd, an execute_tool span); an
// answer sent back is an AnswerRejected event. Result.Text is the answer's
// JSON on every path, and Result.StopReason end_turn for the final tool's
// call.
//
// The errors are those of SendMessage and ErrInvalidAnswer. Resume of a
// structured Send that failed goes on as a plain Send.
func Structured[T any](ctx context.Context, conv *Conversation, prompt string) (T, *Result, error) {
	var zero T
	echo := func(_ context.Context, v T) (T, error) { return v, nil }
	tool, err := tools.New(finalName(reflect.TypeFor[T]().Name()), finalDescription, echo)
	if err != nil {
		return zero, nil, answerSchemaError(err)
	}
	v, res, err := sender{conv}.structured(ctx, prompt, tool)
	if err != nil {
		return zero, res, err
	}
	t, ok := v.(T)
	if !ok { // cannot happen: the tool returns its decoded input
		return zero, res, fmt.Errorf("converse: Structured: the answer decoded as %T", v)
	}
	return t, res, nil
}

// StructuredJSON is Structured for a JSON Schema known only at run time
// (an object schema, as tools.NewRaw takes): it returns the answer as a
// JSON object that matches schema, defaults filled in. The schema's
// "title", if any, names the final tool (final_ and the title). A schema
// it cannot take fails before any model call, as [CheckSchema] says.
func StructuredJSON(ctx context.Context, conv *Conversation, prompt string, schema json.RawMessage) (json.RawMessage, *Result, error) {
	tool, err := answerTool(schema)
	if err != nil {
		return nil, nil, err
	}
	v, res, err := sender{conv}.structured(ctx, prompt, tool)
	if err != nil {
		return nil, res, err
	}
	return v.(json.RawMessage), res, nil
}

// CheckSchema returns the error StructuredJSON returns for schema before
// any model call, or nil if it takes it: schema must be a JSON Schema of an
// object, as tools.NewRaw takes. The error, such as "converse: answer
// schema: type must be "object", got array", wraps tools.ErrInvalidTool.
// (When New's model takes the schema natively, one that sets
// additionalProperties to anything but false still fails the Send; see
// Structured.)
func CheckSchema(schema json.RawMessage) error {
	_, err := answerTool(schema)
	return err
}

// answerTool is StructuredJSON's final tool for schema.
func answerTool(schema json.RawMessage) (*tools.Tool, error) {
	var head struct {
		Title string `json:"title"`
	}
	_ = json.Unmarshal(schema, &head) // NewRaw reports a schema that is not JSON
	echo := func(_ context.Context, in json.RawMessage) (any, error) { return in, nil }
	tool, err := tools.NewRaw(finalName(head.Title), finalDescription, schema, echo)
	if err != nil {
		return nil, answerSchemaError(err)
	}
	return tool, nil
}

// answerSchemaError is err, the tools package's error about the final
// tool's input schema, worded for what it is to the caller: the schema of
// the answer ("converse: answer schema: ..."), the final tool unnamed.
func answerSchemaError(err error) error {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, `": `); ok { // after tools: invalid tool "final_x"
		msg = rest
	}
	if rest, ok := strings.CutPrefix(msg, "input schema"); ok {
		msg = "answer schema" + rest
	}
	return &schemaError{msg: "converse: " + msg, err: err}
}

// schemaError is an error about the answer's schema, in its own words; it
// unwraps to the tools package's error.
type schemaError struct {
	msg string
	err error
}

func (e *schemaError) Error() string { return e.msg }
func (e *schemaError) Unwrap() error { return e.err }

// closedSchema is schema as Bedrock's structured output takes it
// (models.StrictSchema); the answer is still validated against schema
// itself.
func closedSchema(schema json.RawMessage) (string, error) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(schema))
	d.UseNumber() // numbers as written
	if err := d.Decode(&m); err != nil {
		return "", err
	}
	if err := models.StrictSchema(m); err != nil {
		return "", err
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// unnamed finds what the tool-name rule does not allow; compiled at its
// first use.
var unnamed = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]+`) })

// finalName names the final tool after a type or title, cleaned to the
// tool-name rule.
func finalName(name string) string {
	name = strings.Trim(unnamed().ReplaceAllString(name, "_"), "_")
	if name == "" {
		name = "answer"
	}
	name = "final_" + name
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// shape is what a structured Send's answer must be: the final tool, which
// validates and decodes it, and how the last turn's request asked for it
// (see path).
type shape struct {
	tool   *tools.Tool
	native bool            // the last request asked natively: outputConfig.textFormat, the answer its text
	force  bool            // the last request forced the final tool with toolChoice any
	schema string          // the answer's schema as sent natively, objects closed; empty if it cannot be
	spec   types.Tool      // the final tool's spec
	value  any             // the accepted answer
	answer json.RawMessage // the accepted answer's JSON, as the model gave it
	reason string          // why the last answer was rejected
	call   toolCall        // on the final tool's path, the call that gave the answer
	reject []string        // why each final-tool call of the last reply was rejected, in order
}

func (c sender) structured(ctx context.Context, prompt string, tool *tools.Tool) (any, *Result, error) {
	sh, err := newShape(tool, c.model, c.tools, &c.opts, c.kept())
	if err != nil {
		return nil, nil, err
	}
	msg := types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: prompt}}}
	ctx, span := c.tel.startSend(ctx)
	defer span.abort()
	res, err := c.send(ctx, msg, sh)
	span.end(res, err)
	if err != nil {
		return nil, res, err
	}
	return sh.value, res, nil
}

// newShape is the shape of a structured answer whose final tool is tool, in a
// conversation with the model m (New's), the tools of reg, the options o and
// the history. Any turn may take either path (a fallback model, or
// Options.PrepareTurn's, may differ from New's), so both are made ready. A
// schema that cannot be closed fails here only when New's model would take it
// natively. Otherwise it is never sent natively.
func newShape(tool *tools.Tool, m models.Model, reg *tools.Registry, o *Options, history []types.Message) (*shape, error) {
	sh := &shape{tool: tool, reason: "no answer was given"}
	schema, err := closedSchema(tool.InputSchema())
	if err != nil && m.NativeStructuredOutput() {
		return nil, fmt.Errorf("converse: the schema of a structured answer: %w", err)
	}
	if err == nil {
		sh.schema = schema
	}
	// The final tool's name must be free where a turn may offer it: a turn
	// to a model without structured outputs, or one whose request cites.
	native := sh.schema != "" && m.NativeStructuredOutput()
	mayOffer := !native || len(o.ModelCalls.fallback()) > 0 || o.PrepareTurn != nil || message.Citing(baseOf(history))
	if _, taken := reg.Lookup(tool.Name()); taken && mayOffer {
		return nil, fmt.Errorf("converse: the final tool %q of a structured answer is a registered tool's name", tool.Name())
	}
	if sh.spec, err = toolSpec(tool); err != nil {
		return nil, err
	}
	return sh, nil
}

// path is the policy of a structured Send, consulted for each turn's request
// as it is built, with the turn's model m (New's, Options.PrepareTurn's or a
// fallback's). thinks is whether the request's thinking rules out a forced
// tool choice on m. messages are the request's. The request asks for the
// answer natively (outputConfig.textFormat) where m takes it. It does not when
// the schema cannot be sent there, or when a document or search result of the
// request has citations enabled, which Anthropic's structured outputs are
// incompatible with. Otherwise it asks with the final tool. The final tool is
// forced by toolChoice any where m takes it and thinking does not rule it out.
// Else it is offered with the default choice and a line of the system prompt.
// accept then checks the reply against what the request asked for.
func (sh *shape) path(m models.Model, thinks bool, messages []types.Message) (native, force bool) {
	switch {
	case sh.schema != "" && m.NativeStructuredOutput() && !message.Citing(messages):
		return true, false
	case m.ToolChoice().Any && !thinks:
		return false, true
	}
	return false, false
}

// fillResult fills in res, the Result of a structured answer sh accepted:
// its text is the answer's JSON, and the final tool's call ends the turn.
func (sh *shape) fillResult(res *Result) {
	res.Text = string(sh.answer)
	if res.StopReason == types.StopReasonToolUse {
		// The kept history ends with the answer as text, and tool_use
		// would say that the conversation waits for a tool.
		res.StopReason = types.StopReasonEndTurn
	}
}

// apply shapes a turn's request to the model m as path decides, and keeps the
// decision for accept. Natively, the answer's schema is the output's text
// format. Otherwise the final tool joins the request's tools. It comes with
// toolChoice any if forced, or else with a line of the system prompt telling
// the model to call it.
func (sh *shape) apply(in *bedrockruntime.ConverseInput, m models.Model, thinks bool) {
	if sh == nil {
		return
	}
	sh.native, sh.force = sh.path(m, thinks, in.Messages)
	if !sh.native {
		in.ToolConfig = sh.toolConfig(in.ToolConfig)
		if !sh.force {
			in.System = append(slices.Clip(in.System), &types.SystemContentBlockMemberText{Value: fmt.Sprintf(finalInstruction, sh.tool.Name())})
		}
		return
	}
	out := &types.OutputConfig{}
	if in.OutputConfig != nil {
		*out = *in.OutputConfig
	}
	out.TextFormat = &types.OutputFormat{
		Type: types.OutputFormatTypeJsonSchema,
		Structure: &types.OutputFormatStructureMemberJsonSchema{Value: types.JsonSchemaDefinition{
			Name:   aws.String(sh.tool.Name()),
			Schema: aws.String(sh.schema),
		}},
	}
	in.OutputConfig = out
}

// toolConfig is the configuration of a turn on the final tool's path. It holds
// cfg's tools and the final tool, with toolChoice any if forced and the
// default choice otherwise. Of cfg's tools it leaves out a withdrawn
// description of the final tool, which the history may call (see cover).
func (sh *shape) toolConfig(cfg *types.ToolConfiguration) *types.ToolConfiguration {
	out := &types.ToolConfiguration{}
	if sh.force {
		out.ToolChoice = &types.ToolChoiceMemberAny{}
	}
	if cfg != nil {
		out.Tools = slices.DeleteFunc(slices.Clone(cfg.Tools), func(t types.Tool) bool {
			spec, ok := t.(*types.ToolMemberToolSpec)
			return ok && aws.ToString(spec.Value.Name) == sh.tool.Name()
		})
	}
	out.Tools = append(out.Tools, sh.spec)
	return out
}

// check validates an answer, keeping its value or why it was rejected.
func (sh *shape) check(ctx context.Context, answer json.RawMessage) bool {
	v, err := sh.tool.Call(ctx, answer)
	if err != nil {
		var ie *tools.InputError
		if errors.As(err, &ie) {
			sh.reason = ie.Reason
		} else {
			sh.reason = err.Error()
		}
		return false
	}
	sh.value, sh.answer = v, answer
	return true
}

// accept reports whether reply answers, in the form its request asked for (see
// apply). Natively the answer is its text. Otherwise it is a valid call of the
// final tool (the first, if several), which becomes a text block holding its
// input.
func (sh *shape) accept(ctx context.Context, reply *types.Message, stop types.StopReason) bool {
	if sh.native {
		if stop == types.StopReasonToolUse && message.HasToolUse(*reply) {
			return false
		}
		return sh.check(ctx, json.RawMessage(strings.TrimSpace(message.Text(*reply))))
	}
	sh.reason = "answer by calling the tool " + sh.tool.Name() + ", with the answer as its input"
	sh.reject = sh.reject[:0]
	if stop != types.StopReasonToolUse {
		return false
	}
	for i, b := range reply.Content {
		tu, ok := b.(*types.ContentBlockMemberToolUse)
		if !ok || aws.ToString(tu.Value.Name) != sh.tool.Name() || !message.ClientCall(b) {
			continue
		}
		input, err := documentJSON(tu.Value.Input)
		if err != nil {
			sh.reason = "the input is not JSON"
		}
		if err != nil || !sh.check(ctx, input) {
			sh.reject = append(sh.reject, sh.reason)
			continue
		}
		sh.call = toolCall{id: aws.ToString(tu.Value.ToolUseId), name: sh.tool.Name(), input: input}
		content := append([]types.ContentBlock(nil), reply.Content...)
		content[i] = &types.ContentBlockMemberText{Value: string(sh.answer)}
		reply.Content = content
		return true
	}
	return false
}

// correct deals with a final answer of a structured Send that is not the
// answer. It sends the model a correction (for a reply of reasoning alone, the
// same request again). After the last turn, or a stop that another try would
// meet again, it keeps the answer as the conversation's final one instead, and
// ends the run with the error.
func (c *Conversation) correct(ctx context.Context, attempted []types.Message, stop types.StopReason, turnEnd TurnEnd) (*Step, error) {
	r := c.run
	sh := r.shape
	limit := r.turn >= c.opts.maxTurns()
	kept, _ := keepable(attempted)
	if limit || !sh.correctable(stop, attempted[len(attempted)-1]) {
		c.endStep(kept, nil, turnEnd)
		return c.run.fail(attempted, sh.failure(stop, limit, c.opts.maxTurns()))
	}
	reply := attempted[len(attempted)-1]
	var history []types.Message
	if slices.IndexFunc(reply.Content, notReasoning) < 0 {
		// Reasoning alone, which keepable does not keep either (newer Claude
		// models reject an assistant message of reasoning alone). There is no
		// answer to correct. So the reply is dropped and the model asked
		// again, the history ending with the message it answered.
		history = attempted[:len(attempted)-1]
		kept = history
	} else {
		history = append(attempted, types.Message{Role: types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: sh.correction(sh.reason)}}})
	}
	c.endStep(kept, nil, turnEnd) // History holds the reply at its TurnEnd
	c.endStep(history, nil, nil)
	c.events.emit(AnswerRejected{Turn: r.turn, Answer: strings.TrimSpace(message.Text(reply)), Reason: sh.reason})
	return c.nextTurn(ctx)
}

// AnswerRejected reports that the final answer of a turn of a structured Send
// (Structured, StructuredJSON) was not the answer. It was sent back to the
// model with Reason for another try. The answer was text that fails the
// schema, or, where the model must answer by calling the final tool, text
// instead. A reply of reasoning alone (Answer empty) is not sent back, as
// Bedrock would reject it: it is dropped and the model asked again. A call of
// the final tool that fails the schema is reported as a ToolEnd with
// ErrInvalidAnswer instead. The answer that is still invalid at the turn limit
// is not sent back: the Send's error says why.
type AnswerRejected struct {
	Turn   int
	Answer string // the answer's text, as the model gave it
	Reason string // why it does not match, as the model is told
}

func (AnswerRejected) event() {}

// answerFinal answers the calls of the final tool in t, which accept
// found invalid, each with its schema violation, so that the model
// corrects its call. They are reported as the executor reports the calls
// it runs: ToolStart and ToolEnd events, by emit, and an execute_tool
// span, by exec, failed with invalid_input.
func (sh *shape) answerFinal(ctx context.Context, exec *Executor, emit func(Event), turn int, t *openTurn) {
	if sh == nil || sh.native {
		return
	}
	k := 0
	for i, tc := range t.calls {
		if tc.name != sh.tool.Name() {
			continue
		}
		reason := sh.reason
		if k < len(sh.reject) {
			reason = sh.reject[k]
		}
		k++
		emit(ToolStart{Turn: turn, ID: tc.id, Name: tc.name, Input: tc.input})
		t.answer(ctx, exec, i, toolErrInput, sh.correction(reason))
		emit(ToolEnd{Turn: turn, ID: tc.id, Name: tc.name, Input: tc.input,
			Err: fmt.Errorf("%w: %s", ErrInvalidAnswer, reason), Status: types.ToolResultStatusError})
	}
}

// traceAnswer reports the final tool's call that gave the answer, on the
// final tool's path, as the executor reports a call it runs: ToolStart and
// ToolEnd events, by emit, and an execute_tool span, by exec.
func (sh *shape) traceAnswer(ctx context.Context, exec *Executor, emit func(Event), turn int) {
	if sh == nil || sh.native {
		return
	}
	tc := sh.call
	emit(ToolStart{Turn: turn, ID: tc.id, Name: tc.name, Input: tc.input})
	exec.traceUnrun(ctx, tc, "", string(sh.answer))
	emit(ToolEnd{Turn: turn, ID: tc.id, Name: tc.name, Input: tc.input, Output: sh.answer, Status: types.ToolResultStatusSuccess})
}

// correctionPrefix begins every correction, which is how isCorrection
// knows one in a history, a saved one too.
var correctionPrefix = "Error: " + ErrInvalidAnswer.Error() + ": "

// correction is the error the model gets for an answer rejected for reason.
func (sh *shape) correction(reason string) string {
	if sh.native {
		return correctionPrefix + reason + ". Answer again with only a JSON object that matches the schema."
	}
	return correctionPrefix + reason
}

// isCorrection reports a user message that correct added: a correction of
// a structured answer, which is no prompt of the user's.
func isCorrection(m types.Message) bool {
	if m.Role != types.ConversationRoleUser || len(m.Content) == 0 {
		return false
	}
	t, ok := m.Content[0].(*types.ContentBlockMemberText)
	return ok && strings.HasPrefix(t.Value, correctionPrefix)
}

// correctable reports whether a final answer that is not one can be sent
// back for another try: not when the model stopped for a reason another
// try would meet again, nor after its last turn.
func (sh *shape) correctable(stop types.StopReason, reply types.Message) bool {
	switch stop {
	case types.StopReasonEndTurn, types.StopReasonStopSequence, types.StopReasonToolUse:
		return len(reply.Content) > 0 && !message.HasToolUse(reply)
	}
	return false
}

// failure is the error of a structured Send that ends without an answer.
func (sh *shape) failure(stop types.StopReason, limit bool, maxTurns int) error {
	if limit {
		return fmt.Errorf("%w (%d model calls): %w: %s; raise Options.MaxTurns", ErrMaxTurns, maxTurns, ErrInvalidAnswer, sh.reason)
	}
	return fmt.Errorf("%w: stop reason %s: %s", ErrInvalidAnswer, stop, sh.reason)
}
