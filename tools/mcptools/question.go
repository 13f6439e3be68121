package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tooluse/bedrock/tools"
	"github.com/tooluse/bedrock/tools/internal/modelerr"
)

// retry is what a question keeps to retry the call with the answer. For
// an input-required result, it is the input request's key and the request
// state the server asked to get back. For an elicitation/create request,
// it says that the answer goes to the request the call makes again
// (Request), after the answers to the requests the call made before it
// (Earlier).
type retry struct {
	Key     string  `json:"key,omitempty"`
	State   string  `json:"requestState,omitempty"`
	Request bool    `json:"request,omitempty"`
	Earlier []given `json:"earlier,omitempty"`
}

// given is the answer given to an elicitation/create request.
type given struct {
	Message string            `json:"message"`
	Result  *mcp.ElicitResult `json:"result"`
}

// asking is a call in flight, as the elicitation/create requests of its server
// find it. It holds the answers to give, in order, if the call is a retry, and
// those given. It holds the question it asked, to pause it.
type asking struct {
	mu       sync.Mutex
	answers  []given
	given    []given
	question *tools.Question
}

// askings are the calls of a conn in flight.
type askings struct {
	mu    sync.Mutex
	calls map[*asking]bool
}

func (as *askings) add(a *asking) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.calls == nil {
		as.calls = map[*asking]bool{}
	}
	as.calls[a] = true
}

func (as *askings) remove(a *asking) {
	as.mu.Lock()
	defer as.mu.Unlock()
	delete(as.calls, a)
}

// only is the one call in flight; nil when there are more (or none), as
// an elicitation/create request does not say which call it is for.
func (as *askings) only() *asking {
	as.mu.Lock()
	defer as.mu.Unlock()
	if len(as.calls) != 1 {
		return nil
	}
	for a := range as.calls {
		return a
	}
	return nil
}

// elicited answers a server's elicitation/create request (the protocols
// before 2026-07-28, and a stateful HTTP session) for the one call in
// flight. If the next answer its retry carries is to the same message, it
// answers with that. Otherwise it takes the question down, to pause the
// call, and refuses the request, which fails the call at the server. The retry
// asks the server again, and the requests it makes again get the
// answers: the server's tool runs again up to its next question.
func (c *conn) elicited(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a := c.asking.only()
	switch {
	case a == nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "converse cannot tell which of its calls in flight this question is for"}
	case req.Params.Mode == "url" || req.Params.URL != "":
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "converse answers forms only"}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.answers) > 0 && a.answers[0].Message == req.Params.Message {
		g := a.answers[0]
		a.answers, a.given = a.answers[1:], append(a.given, g)
		return g.Result, nil
	}
	q, err := question(req.Params, retry{Request: true, Earlier: a.given})
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	a.question = q
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the user answers later: the call is paused, and will be made again with the answer"}
}

// question is the question of p, which r retries.
func question(p *mcp.ElicitParams, r retry) (*tools.Question, error) {
	q := &tools.Question{Message: p.Message}
	if p.RequestedSchema != nil {
		s, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("a question with a schema that is not JSON: %w", err)
		}
		q.Schema = s
	}
	q.Retry, _ = json.Marshal(r) // of JSON the server sent or the user gave: cannot fail
	return q, nil
}

// asked, the question a's call asked with an elicitation/create request,
// if it did, as the call's error.
func (a *asking) asked() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.question == nil {
		return nil
	}
	return &tools.InputRequiredError{Question: *a.question}
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
		q, err := question(p, retry{Key: key, State: res.RequestState})
		if err != nil {
			return modelerr.Errorf(ErrToolFailed, "the MCP server %q asked %v", server, err)
		}
		return &tools.InputRequiredError{Question: *q}
	}
	return nil // not reached: the map holds one request
}

// answered sets the call of params, a, up to go on with the user's answer ans.
// It sets the input responses of a retry. For a question asked with a request,
// it sets the answers for the requests made again.
func answered(params *mcp.CallToolParams, a *asking, ans tools.Answer) error {
	var r retry
	if err := json.Unmarshal(ans.Question.Retry, &r); err != nil || r.Key == "" && !r.Request {
		return fmt.Errorf("mcptools: the answer is not to a question of an MCP server")
	}
	res := &mcp.ElicitResult{Action: string(ans.Action)}
	if ans.Action == tools.Accept {
		if err := json.Unmarshal(ans.Content, &res.Content); err != nil {
			return fmt.Errorf("mcptools: the accepted answer: %w", err)
		}
	}
	if r.Request {
		a.answers = append(r.Earlier, given{Message: ans.Question.Message, Result: res})
		return nil
	}
	params.InputResponses = mcp.InputResponseMap{r.Key: res}
	params.RequestState = r.State
	return nil
}
