package mcptools

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/internal/modelerr"
)

// retry is what a question keeps of the server's input-required result
// to retry the call with the answer: the input request's key and the
// request state the server asked to get back.
type retry struct {
	Key   string `json:"key"`
	State string `json:"requestState,omitempty"`
}

// asked maps a server's input-required result (the 2026-07-28 protocol's
// multi-round-trip requests) to a *tools.InputRequiredError holding its
// question. Only one form elicitation at a time is a question the user
// can answer; anything else fails the call, saying why, for the model.
func asked(server string, res *mcp.CallToolResult) error {
	if len(res.InputRequests) == 0 {
		return modelerr.Errorf(ErrToolFailed, "the MCP server %q is busy: it asked for no input and no retry came through", server)
	}
	if len(res.InputRequests) > 1 {
		return modelerr.Errorf(ErrToolFailed, "the MCP server %q asked %d questions at once; this client asks one at a time", server, len(res.InputRequests))
	}
	for key, ir := range res.InputRequests {
		p, ok := ir.(*mcp.ElicitParams)
		if !ok {
			return modelerr.Errorf(ErrToolFailed, "the MCP server %q asked for input of a kind this client does not give (%T)", server, ir)
		}
		if p.Mode == "url" || p.URL != "" {
			return modelerr.Errorf(ErrToolFailed, "the MCP server %q asked the user to visit a URL; this client answers forms only", server)
		}
		q := tools.Question{Message: p.Message}
		if p.RequestedSchema != nil {
			s, err := json.Marshal(p.RequestedSchema)
			if err != nil {
				return modelerr.Errorf(ErrToolFailed, "the MCP server %q asked a question with a schema that is not JSON: %v", server, err)
			}
			q.Schema = s
		}
		q.Retry, _ = json.Marshal(retry{Key: key, State: res.RequestState}) // strings: cannot fail
		return &tools.InputRequiredError{Question: q}
	}
	return nil // not reached: the map holds one request
}

// answered sets params up to retry a call with the user's answer a,
// given to the question that asked made.
func answered(params *mcp.CallToolParams, a tools.Answer) error {
	var r retry
	if err := json.Unmarshal(a.Question.Retry, &r); err != nil || r.Key == "" {
		return fmt.Errorf("mcptools: the answer is not to a question of an MCP server")
	}
	res := &mcp.ElicitResult{Action: string(a.Action)}
	if a.Action == tools.Accept {
		if err := json.Unmarshal(a.Content, &res.Content); err != nil {
			return fmt.Errorf("mcptools: the accepted answer: %w", err)
		}
	}
	params.InputResponses = mcp.InputResponseMap{r.Key: res}
	params.RequestState = r.State
	return nil
}
