package bedrocktest

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/tooluse/bedrock/converse/internal/message"
	"github.com/tooluse/bedrock/converse/internal/models"
	"github.com/tooluse/bedrock/converse/recording"
)

// Validate checks req against the rules Bedrock enforces on a Converse or
// ConverseStream request, and returns the 400 ValidationException Bedrock
// would answer, with Bedrock's wording, or nil. A Server applies it to every
// request unless WithLenient is set; it is exported so that a test can check
// a history without a server.
//
// The rules are those a tool-use loop can break:
//
//   - The shape of the conversation. It starts with a user message and
//     alternates roles. No content is empty, no text blank, no system text
//     empty.
//   - Tool blocks. They come only with a toolConfig. Each toolUse is
//     answered by exactly one toolResult in the next message. toolUse
//     blocks are sent back without "type":"tool_use". A server tool's
//     toolResult blocks come only in the assistant message of its
//     server_tool_use call, and the next user message does not answer it.
//   - Tool names and schemas.
//   - The quirks of model families (see the models package): the
//     toolResult status field, text beside tool results, tools in
//     streaming mode. toolChoice any and tool need Claude 3 and later or
//     Nova; Mistral Large takes any too. A forcing toolChoice is refused
//     beside Claude's extended thinking. That is "thinking" or
//     "reasoning_config" of type enabled in additionalModelRequestFields.
//   - Sampling. temperature and topP each run from 0 to 1. Claude Sonnet
//     4.5 and 4.6, Haiku 4.5 and Opus 4.5 and 4.6 take only one of them.
//     maxTokens is at least 1.
//   - Claude's extended thinking with a budget. budget_tokens is from 1024
//     and below maxTokens, unless interleaved thinking is on. temperature
//     is 1 or unset, topP from 0.95 or unset, and top_k absent. A request
//     that continues a tool loop sends back the reasoning block that
//     opened it.
//   - Structured output. outputConfig.textFormat is only for the models
//     with structured output: Claude Sonnet 4.5, Haiku 4.5, Opus 4.5 and
//     4.6. It is refused with citations enabled on a document or search
//     result. Object schemas are closed ("additionalProperties": false on
//     each), in outputConfig.textFormat and in strict tools' input schemas.
//   - Images and documents: their sizes, counts and names (no name twice
//     in the request's messages). Their bytes must be a whole image of its
//     format, or a document that starts as its format does. A model family
//     takes only some of them in a tool result. A request holds at most 5
//     documents. For Claude, it holds at most 100 images and documents
//     together, and 2,000 px a side in a request of more than 20 images.
//   - Prompt caching: which models and fields take cache points, at most
//     four. Their TTLs do not increase. None comes right after a document,
//     video or reasoning block.
func Validate(req *Request) *Error {
	m := models.Parse(aws.ToString(req.ModelId))
	if e := validateToolConfig(req.ToolConfig); e != nil {
		return e
	}
	if e := validateSampling(m, req.InferenceConfig); e != nil {
		return e
	}
	if e := validateToolChoice(m, req); e != nil {
		return e
	}
	if e := validateThinking(m, req); e != nil {
		return e
	}
	if e := validateOutputSchema(m, req); e != nil {
		return e
	}
	if req.Operation == recording.OpConverseStream && req.ToolConfig != nil && !m.SupportsStreamingToolUse() {
		return Validation("This model doesn't support tool use in streaming mode.")
	}
	for i, b := range req.System {
		if t, ok := b.(*types.SystemContentBlockMemberText); ok && t.Value == "" {
			return Validation(fmt.Sprintf("1 validation error detected: Value '' at 'system.%d.member.text' failed to satisfy constraint: Member must have length greater than or equal to 1", i+1))
		}
	}
	msgs := req.Messages
	if len(msgs) == 0 || msgs[0].Role != types.ConversationRoleUser {
		return Validation("A conversation must start with a user message. Try again with a conversation that starts with a user message.")
	}
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Role == msgs[i-1].Role {
			return Validation("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.")
		}
	}
	if req.ToolConfig == nil && message.HasToolBlocks(msgs) {
		return Validation("The toolConfig field must be defined when using toolUse and toolResult content blocks.")
	}
	for n, msg := range msgs {
		if e := validateMessage(m, n, msg); e != nil {
			return e
		}
		if e := validateMedia(m, n, msg); e != nil {
			return e
		}
		var prev types.Message
		if n > 0 {
			prev = msgs[n-1]
		}
		if e := validateToolResults(n, prev, msg); e != nil {
			return e
		}
	}
	if e := validateDocumentNames(msgs); e != nil {
		return e
	}
	if e := validateRequestMedia(m, msgs); e != nil {
		return e
	}
	if e := validateThinkingLoop(m, req); e != nil {
		return e
	}
	return validateCache(m, req)
}

// thinkingFirst is Claude's answer, through Bedrock, to a request that
// continues a tool loop under extended thinking without the reasoning that
// opened it. Three reports quote it. langchain-ai/langchain-aws issue 844
// found `text` (Bedrock's ConverseStream). anomalyco/opencode issue 3077
// found `tool_use` (Bedrock through LiteLLM). n8n-io/n8n issue 22550 is
// Anthropic's API.
const thinkingFirst = modelErrors + "messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"

// validateThinkingLoop checks a request whose last message answers tool
// calls, beside Claude's extended thinking with a budget. The assistant
// message that opened the loop must start with a reasoning block. That
// message is the first after the last user message holding no tool
// results. Earlier turns' reasoning may be left out.
func validateThinkingLoop(m models.Model, req *Request) *Error {
	if _, on := m.BudgetThinking(documentJSON(req.AdditionalModelRequestFields)); !on {
		return nil
	}
	msgs := req.Messages
	if len(msgs) == 0 || !message.AnswersTools(msgs[len(msgs)-1]) {
		return nil
	}
	n := len(msgs) - 1
	for n > 0 && (msgs[n-1].Role != types.ConversationRoleUser || message.AnswersTools(msgs[n-1])) {
		n--
	}
	for _, b := range msgs[n].Content {
		if _, ok := b.(*types.ContentBlockMemberCachePoint); ok {
			continue
		}
		if message.IsReasoning(b) {
			return nil
		}
		return Validation(fmt.Sprintf(thinkingFirst, n, anthropicType(b)))
	}
	return nil
}

// anthropicType names b's kind as Anthropic's Messages API does, for its
// error messages; those other than text and tool_use are guesses.
func anthropicType(b types.ContentBlock) string {
	switch b.(type) {
	case *types.ContentBlockMemberToolUse:
		return "tool_use"
	case *types.ContentBlockMemberToolResult:
		return "tool_result"
	case *types.ContentBlockMemberImage:
		return "image"
	case *types.ContentBlockMemberDocument:
		return "document"
	}
	return "text"
}

// toolNamePattern is the constraint on ToolSpecification.name.
const toolNamePattern = `^[a-zA-Z0-9_-]{1,64}$`

var toolName = regexp.MustCompile(toolNamePattern)

func validateToolConfig(tc *types.ToolConfiguration) *Error {
	if tc == nil {
		return nil
	}
	if len(tc.Tools) == 0 {
		return Validation("1 validation error detected: Value '[]' at 'toolConfig.tools' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	seen := map[string]bool{}
	for i, tool := range tc.Tools {
		if st, ok := tool.(*types.ToolMemberSystemTool); ok && aws.ToString(st.Value.Name) == "" {
			return Validation(fmt.Sprintf("1 validation error detected: Value null at 'toolConfig.tools.%d.member.systemTool.name' failed to satisfy constraint: Member must not be null", i+1))
		}
		spec, ok := tool.(*types.ToolMemberToolSpec)
		if !ok {
			continue
		}
		name := aws.ToString(spec.Value.Name)
		if !toolName.MatchString(name) {
			// Coral's constraint messages count list members from 1.
			return Validation(fmt.Sprintf("1 validation error detected: Value '%s' at 'toolConfig.tools.%d.member.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: %s", name, i+1, toolNamePattern))
		}
		if seen[name] {
			return Validation(fmt.Sprintf("The toolConfig field contains more than one tool named %s. Tool names must be unique.", name))
		}
		seen[name] = true
		schema, ok := spec.Value.InputSchema.(*types.ToolInputSchemaMemberJson)
		if !ok || !isObject(schema.Value) {
			return Validation(fmt.Sprintf("The value at toolConfig.tools.%d.toolSpec.inputSchema.json must be a JSON object.", i))
		}
		if aws.ToBool(spec.Value.Strict) {
			if e := closedSchema(fmt.Sprintf("tools.%d.custom", i), documentJSON(schema.Value)); e != nil {
				return e
			}
		}
	}
	return nil
}

// validateMessage checks the blocks of messages[n] one by one.
func validateMessage(m models.Model, n int, msg types.Message) *Error {
	if len(msg.Content) == 0 {
		return Validation(fmt.Sprintf("The content field in the Message object at messages.%d is empty. Add a ContentBlock object to the content field and try again.", n))
	}
	var results, others int
	servers := map[string]bool{} // the server tool calls so far in msg
	for i, block := range msg.Content {
		switch b := block.(type) {
		case *types.ContentBlockMemberText:
			others++
			if strings.TrimSpace(b.Value) == "" {
				return Validation(fmt.Sprintf("The text field in the ContentBlock object at messages.%d.content.%d is blank. Add text to the text field, and try again.", n, i))
			}
		case *types.ContentBlockMemberToolUse:
			others++
			if t := b.Value.Type; t != "" && t != types.ToolUseTypeServerToolUse {
				return Validation(fmt.Sprintf("1 validation error detected: Value '%s' at 'messages.%d.member.content.%d.member.toolUse.type' failed to satisfy constraint: Member must satisfy enum value set: [server_tool_use]", t, n+1, i+1))
			}
			if b.Value.Type == types.ToolUseTypeServerToolUse {
				servers[aws.ToString(b.Value.ToolUseId)] = true
			}
		case *types.ContentBlockMemberToolResult:
			if msg.Role == types.ConversationRoleAssistant {
				// A server tool's result, which Bedrock puts after its call.
				if id := aws.ToString(b.Value.ToolUseId); !servers[id] {
					return Validation(fmt.Sprintf("The toolUseId %s of the toolResult block at messages.%d.content.%d does not match any server_tool_use toolUse block before it in the message.", id, n, i))
				}
				others++
			} else {
				results++
			}
			if e := validateToolResult(m, n, i, b.Value); e != nil {
				return e
			}
		case *types.ContentBlockMemberReasoningContent:
			others++
			if m.RejectsReasoningHistory() {
				return Validation("User messages cannot contain reasoning content. Please remove the reasoning content and try again.")
			}
		case *types.ContentBlockMemberCachePoint:
			// a marker, not conversation content
		default:
			others++
		}
	}
	if results > 0 && others > 0 && m.RejectsTextWithToolResults() {
		return Validation("Conversation blocks and tool result blocks cannot be provided in the same turn.")
	}
	return nil
}

func validateToolResult(m models.Model, n, i int, r types.ToolResultBlock) *Error {
	if r.Status != "" && !m.SupportsToolStatus() {
		return Validation("This model doesn't support the status field. Remove status and try again.")
	}
	if r.Status == types.ToolResultStatusError && len(r.Content) == 0 {
		return Validation(fmt.Sprintf("The content field at messages.%d.content.%d.toolResult cannot be empty when status value is error.", n, i))
	}
	for k, c := range r.Content {
		switch v := c.(type) {
		case *types.ToolResultContentBlockMemberText:
			if strings.TrimSpace(v.Value) == "" {
				return Validation(fmt.Sprintf("The text field in the ToolResultContentBlock object at messages.%d.content.%d.toolResult.content.%d is blank. Add text to the text field, and try again.", n, i, k))
			}
		case *types.ToolResultContentBlockMemberJson:
			if !isObject(v.Value) {
				return Validation(fmt.Sprintf("The json field in the ToolResultContentBlock object at messages.%d.content.%d.toolResult.content.%d must be a JSON object.", n, i, k))
			}
		}
	}
	return nil
}

// validateToolResults checks that messages[n] answers every client toolUse
// of messages[n-1] with exactly one toolResult, and nothing else: a server
// tool's call (type server_tool_use) was answered by Bedrock, in its own
// message.
func validateToolResults(n int, prev, msg types.Message) *Error {
	var uses []string
	used := map[string]bool{}
	for _, b := range prev.Content {
		if tu, ok := b.(*types.ContentBlockMemberToolUse); ok && prev.Role == types.ConversationRoleAssistant && tu.Value.Type != types.ToolUseTypeServerToolUse {
			id := aws.ToString(tu.Value.ToolUseId)
			uses = append(uses, id)
			used[id] = true
		}
	}
	answered := map[string]bool{}
	results := 0
	for i, b := range msg.Content {
		tr, ok := b.(*types.ContentBlockMemberToolResult)
		if !ok || msg.Role == types.ConversationRoleAssistant {
			continue
		}
		results++
		if results > len(uses) {
			return Validation(fmt.Sprintf("The number of toolResult blocks at messages.%d.content exceeds the number of toolUse blocks of previous turn.", n))
		}
		id := aws.ToString(tr.Value.ToolUseId)
		if !used[id] {
			return Validation(fmt.Sprintf("The toolUseId %s of the toolResult block at messages.%d.content.%d does not match any toolUse block of previous turn.", id, n, i))
		}
		answered[id] = true
	}
	var missing []string
	for _, id := range uses {
		if !answered[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return Validation(fmt.Sprintf("Expected toolResult blocks at messages.%d.content for the following Ids: %s", n, strings.Join(missing, ", ")))
	}
	return nil
}

// isObject reports whether a document holds a JSON object.
func isObject(d document.Interface) bool {
	if d == nil {
		return false
	}
	b, err := d.MarshalSmithyDocument()
	if err != nil {
		return false
	}
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}
