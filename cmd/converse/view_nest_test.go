package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/agenttool"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
)

// agentsSession runs a coordinator whose call c1 runs the agent
// researcher, whose call r1 runs the agent checker, whose call k1 runs
// the tool echo, each model on bedrocktest. It returns the coordinator's
// session file; the agents' are beside it, "session.c1" and
// "session.c1.r1", as agenttool saves them.
func agentsSession(t *testing.T) string {
	scripts := map[string]bedrocktest.Handler{
		viewModel: bedrocktest.Script(
			bedrocktest.ToolUse("Asking the researcher.", bedrocktest.Call{ID: "c1", Name: "researcher", Input: map[string]any{"task": "find n"}}),
			bedrocktest.Text("n is 7."),
		),
		"researcher-model": bedrocktest.Script(
			bedrocktest.ToolUse("Asking the checker.", bedrocktest.Call{ID: "r1", Name: "checker", Input: map[string]any{"task": "check 7"}}),
			bedrocktest.Text("Research says 7 "+malicious),
		),
		"checker-model": bedrocktest.Script(
			bedrocktest.ToolUse("Echoing.", bedrocktest.Call{ID: "k1", Name: "echo", Input: map[string]any{"n": 7}}),
			bedrocktest.Text("Checked: 7."),
		),
	}
	srv := bedrocktest.NewServer(bedrocktest.HandlerFunc(func(ctx context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		return scripts[aws.ToString(req.ModelId)].ServeConverse(ctx, req)
	}))
	t.Cleanup(srv.Close)
	type in struct {
		N int `json:"n"`
	}
	echo, err := tools.New("echo", "Echoes.", func(_ context.Context, v in) (any, error) { return v, nil })
	require.NoError(t, err)
	agent := func(name, model string, own ...*tools.Tool) *tools.Tool {
		reg, err := tools.NewRegistry(own...)
		require.NoError(t, err)
		tool, err := agenttool.New(agenttool.Agent{Name: name, Description: "An agent.", Client: srv.Client(), Model: model, Tools: reg})
		require.NoError(t, err)
		return tool
	}
	reg, err := tools.NewRegistry(agent("researcher", "researcher-model", agent("checker", "checker-model", echo)))
	require.NoError(t, err)
	dir := t.TempDir()
	c := converse.New(srv.Client(), viewModel, reg, func(o *converse.Options) {
		o.Session = &converse.Session{Store: filestore.Store{Dir: dir}, ID: "session"}
	})
	_, err = c.Send(context.Background(), "What is n?")
	require.NoError(t, err)
	return filepath.Join(dir, "session")
}

// TestViewNestedAgents: a session's call ran an agent, whose call ran
// another. The page draws each agent's conversation under the call that
// ran it, collapsed, with its own turns, calls and times on the page's
// axis. Its text is escaped as the caller's is.
func TestViewNestedAgents(t *testing.T) {
	session := agentsSession(t)
	require.FileExists(t, session+".c1.r1", "agenttool saved the agent's agent")
	doc := parseHTML(t, renderView(t, session))
	assert.Equal(t, "2", text(byID(t, doc, "turns")), "the header counts the coordinator's turns")
	assert.Equal(t, "1", text(byID(t, doc, "calls")))

	first := byID(t, doc, "call-1-1-agent")
	assert.Equal(t, "details", first.Data)
	assert.False(t, hasAttr(first, "open"), "collapsed")
	assert.Same(t, byID(t, doc, "call-1-1"), parent(first, "details"), "under the call that ran it")
	mustContain(t, "the researcher's conversation", text(first), "session session.c1", "researcher-model", "2 turns, 1 call",
		"Asking the checker.", "Research says 7 "+malicious)
	assert.Same(t, first, parent(byID(t, doc, "call-1-1-turn-1"), "details"))
	assert.Same(t, first, parent(byID(t, doc, "call-1-1-turn-2"), "details"))

	second := byID(t, doc, "call-1-1-call-1-1-agent")
	assert.Same(t, byID(t, doc, "call-1-1-call-1-1"), parent(second, "details"), "two levels down")
	mustContain(t, "the checker's conversation", text(second), "session session.c1.r1", "checker-model", "Echoing.", "Checked: 7.")
	echo := byID(t, doc, "call-1-1-call-1-1-call-1-1")
	assert.Equal(t, "echo", attr(echo, "data-tool"))
	assert.Contains(t, text(echo), `{"n":7}`)
	assert.NotEmpty(t, findAll(echo, func(n *html.Node) bool { return attr(n, "class") == "bar" }), "the nested call has its time")

	assert.Len(t, findAll(doc, func(n *html.Node) bool { return n.Data == "script" }), 1, "the page's own script only")
	assert.Empty(t, findAll(doc, func(n *html.Node) bool { return hasAttr(n, "onerror") }))
}

// TestViewNestedErrors: an agent's session that cannot be read is a note
// under its call, not a failure of the page; a call that ran no agent has
// none, and a missing agent's session none either.
func TestViewNestedErrors(t *testing.T) {
	session := agentsSession(t)
	require.NoError(t, os.Remove(session+".c1.r1"))
	require.NoError(t, os.WriteFile(session+".c1", []byte(`{"version": 1, "messages": "not messages"}`), 0o600))
	doc := parseHTML(t, renderView(t, session))
	mustContain(t, "the unreadable session", text(byID(t, doc, "call-1-1-agent")), "session session.c1, not read")
	assert.Nil(t, findByID(doc, "call-1-1-turn-1"))

	require.NoError(t, os.Remove(session+".c1"))
	doc = parseHTML(t, renderView(t, session))
	assert.Nil(t, findByID(doc, "call-1-1-agent"), "a missing session is no agent's")
}

// parent is n's nearest ancestor of element tag, or nil.
func parent(n *html.Node, tag string) *html.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Data == tag {
			return p
		}
	}
	return nil
}

func findByID(doc *html.Node, id string) *html.Node {
	found := findAll(doc, func(n *html.Node) bool { return attr(n, "id") == id })
	if len(found) == 0 {
		return nil
	}
	return found[0]
}

// nestJS is the test's script for TestViewNestedInBrowser: it clicks
// "expand all", then records where every track is, and every call's own
// bar, by the call's id, in pixels.
const nestJS = `(function () {
  function box(e) { var r = e.getBoundingClientRect(); return {left: r.left, right: r.right}; }
  document.getElementById('expand').click();
  var out = {tracks: [], bars: {}};
  document.querySelectorAll('.track').forEach(function (t) { out.tracks.push(box(t)); });
  document.querySelectorAll('.call').forEach(function (c) {
    var b = c.querySelector(':scope > summary .bar');
    if (b) out.bars[c.id] = box(b);
  });
  document.documentElement.setAttribute('data-measure', JSON.stringify(out));
})();`

// TestViewNestedInBrowser: in Chromium, "expand all" opens the agents'
// conversations, whose tracks are the page's: the same left edge and
// width as the caller's. Each agent's call sits within the bar of the
// call that ran the agent, as its times are the caller's clock's.
func TestViewNestedInBrowser(t *testing.T) {
	var m struct {
		Tracks []span
		Bars   map[string]span
	}
	require.NoError(t, json.Unmarshal([]byte(runOnPage(t, renderView(t, agentsSession(t)), nestJS)), &m))
	require.Len(t, m.Tracks, 9, "each of the three conversations' two model calls and one tool call")
	for i, tr := range m.Tracks {
		assert.InDelta(t, m.Tracks[0].Left, tr.Left, 0.5, "track %d's left edge", i)
		assert.InDelta(t, m.Tracks[0].Right, tr.Right, 0.5, "track %d's right edge", i)
	}
	require.Greater(t, m.Tracks[0].Right-m.Tracks[0].Left, 300.0)
	outer := "call-1-1"
	for _, inner := range []string{"call-1-1-call-1-1", "call-1-1-call-1-1-call-1-1"} {
		require.Contains(t, m.Bars, inner)
		assert.GreaterOrEqual(t, m.Bars[inner].Left, m.Bars[outer].Left-0.5, "%s starts within %s", inner, outer)
		assert.LessOrEqual(t, m.Bars[inner].Right, m.Bars[outer].Right+0.5, "%s ends within %s", inner, outer)
		outer = inner
	}
}

// callSession saves, as session id of dir, a conversation whose one reply
// calls tool "agent" with each of ids, each call answered.
func callSession(t *testing.T, dir, id string, ids ...string) {
	var uses, answers []types.ContentBlock
	for _, c := range ids {
		uses = append(uses, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String(c), Name: aws.String("agent"), Input: document.NewLazyDocument(map[string]any{})}})
		answers = append(answers, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String(c),
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: "ok"}}}})
	}
	st := &converse.State{ModelID: viewModel, Messages: []types.Message{
		{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Go."}}},
		{Role: types.ConversationRoleAssistant, Content: uses},
		{Role: types.ConversationRoleUser, Content: answers},
	}}
	require.NoError(t, filestore.Store{Dir: dir}.Save(context.Background(), id, st))
}

// TestViewNestedBounds: agents' conversations are drawn 4 levels deep at
// most, and looked up for the first nestReads calls only, which the
// header says.
func TestViewNestedBounds(t *testing.T) {
	dir := t.TempDir()
	id := "s"
	for range 6 { // s calls x, which s.x is the agent of, which calls x, ...
		callSession(t, dir, id, "x")
		id += ".x"
	}
	doc := parseHTML(t, renderView(t, filepath.Join(dir, "s")))
	anchor := "call-1-1"
	for level := 1; level <= 5; level++ {
		agent := findByID(doc, anchor+"-agent")
		if level <= nestDepth {
			assert.NotNil(t, agent, "level %d", level)
		} else {
			assert.Nil(t, agent, "level %d is past the depth", level)
		}
		anchor += "-call-1-1"
	}

	ids := make([]string, nestReads+1)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%d", i+1)
	}
	callSession(t, dir, "many", ids...)
	callSession(t, dir, "many.c1", "y")
	callSession(t, dir, fmt.Sprintf("many.c%d", nestReads+1), "y")
	doc = parseHTML(t, renderView(t, filepath.Join(dir, "many")))
	assert.NotNil(t, findByID(doc, "call-1-1-agent"))
	assert.Nil(t, findByID(doc, fmt.Sprintf("call-1-%d-agent", nestReads+1)), "not looked up")
	assert.Contains(t, text(findAll(doc, func(n *html.Node) bool { return n.Data == "header" })[0]),
		fmt.Sprintf("agents' conversations were looked up for %d calls only, the first ones", nestReads))
}
