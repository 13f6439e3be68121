package converse_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/internal/wire"
	"github.com/tooluse/bedrock/tools"
)

// TestDocumentNamesUniqueInRequest runs conversations whose tools return
// documents of one name, against a bedrocktest that rejects a request
// holding a document name twice, as Bedrock does.
func TestDocumentNamesUniqueInRequest(t *testing.T) {
	text := func(name string) tools.Media { return tools.Media{Type: "text/plain", Name: name, Data: []byte("x")} }
	long := strings.Repeat("a", 197) + " bc" // Bedrock's longest, 200 characters
	call := func(id, name string) bedrocktest.Call {
		return bedrocktest.Call{ID: id, Name: name, Input: map[string]any{}}
	}
	for _, tc := range []struct {
		name  string
		tools map[string][]tools.Media
		turns [][]bedrocktest.Call
		want  []string // the names of the last request, in order
	}{{
		name:  "an unnamed document over calls and turns",
		tools: map[string][]tools.Media{"report": {text("")}},
		turns: [][]bedrocktest.Call{{call("t1", "report"), call("t2", "report")}, {call("t3", "report")}},
		want:  []string{"document 1", "document 2", "document 3"},
	}, {
		name:  "one name twice from one tool",
		tools: map[string][]tools.Media{"fetch": {text("notes.txt"), text("notes.md")}},
		turns: [][]bedrocktest.Call{{call("t1", "fetch")}},
		want:  []string{"notes", "notes 2"},
	}, {
		name:  "a name of the history",
		tools: map[string][]tools.Media{"fetch": {text("notes")}},
		turns: [][]bedrocktest.Call{{call("t1", "fetch")}, {call("t2", "fetch")}, {call("t3", "fetch")}},
		want:  []string{"notes", "notes 2", "notes 3"},
	}, {
		name:  "another case of a name",
		tools: map[string][]tools.Media{"a": {text("notes")}, "b": {text("NOTES")}},
		turns: [][]bedrocktest.Call{{call("t1", "a")}, {call("t2", "b")}},
		want:  []string{"notes", "NOTES 2"},
	}, {
		name:  "a long name cut for its number",
		tools: map[string][]tools.Media{"fetch": {text(long), text(long)}},
		turns: [][]bedrocktest.Call{{call("t1", "fetch")}},
		want:  []string{long, strings.Repeat("a", 197) + " 2"},
	}, {
		name: "a new number no later document has",
		tools: map[string][]tools.Media{
			"one": {text("")}, "two": {text(""), text("")}, "named": {text("document 3")},
		},
		turns: [][]bedrocktest.Call{{call("t1", "one"), call("t2", "two"), call("t3", "named")}},
		want:  []string{"document 1", "document 4", "document 2", "document 3"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var ts []*tools.Tool
			for name, media := range tc.tools {
				ts = append(ts, mediaTool(t, name, tools.Result{Output: "ok", Media: media}))
			}
			var replies []*bedrocktest.Reply
			for _, calls := range tc.turns {
				replies = append(replies, bedrocktest.ToolUse("", calls...))
			}
			srv, client := serve(t, bedrocktest.Script(append(replies, bedrocktest.Text("Seen."))...))
			res, err := converse.New(client, claude, registry(t, ts...)).Send(context.Background(), "Look.")
			require.NoError(t, err, "no request holds a document name twice")
			assert.Equal(t, "Seen.", res.Text)
			reqs := srv.Requests()
			assert.Equal(t, tc.want, wire.DocumentNames(reqs[len(reqs)-1].Messages...))
		})
	}
}

// TestExecutorDocumentNamesUnique: the results of one Execute hold no
// document name twice.
func TestExecutorDocumentNamesUnique(t *testing.T) {
	e := &converse.Executor{Registry: registry(t, mediaTool(t, "report", tools.Result{Media: []tools.Media{
		{Type: "text/csv", Data: []byte("a,b\n")},
	}}))}
	out := e.Execute(context.Background(), []types.ContentBlock{
		toolUse("t1", "report", map[string]any{}), toolUse("t2", "report", map[string]any{}),
	})
	var names []string
	for _, b := range out {
		for _, c := range b.(*types.ContentBlockMemberToolResult).Value.Content {
			names = append(names, aws.ToString(c.(*types.ToolResultContentBlockMemberDocument).Value.Name))
		}
	}
	assert.Equal(t, []string{"document 1", "document 2"}, names)
}

// TestResumeDocumentNamesUnique: the results message a Resume makes, after
// a pause for approval, also numbers a name the history has.
func TestResumeDocumentNamesUnique(t *testing.T) {
	fetch := mediaTool(t, "fetch", tools.Result{Output: "ok", Media: []tools.Media{{Type: "text/plain", Name: "notes", Data: []byte("x")}}})
	call := func(id string) *bedrocktest.Reply {
		return bedrocktest.ToolUse("", bedrocktest.Call{ID: id, Name: "fetch", Input: map[string]any{}})
	}
	srv, client := serve(t, bedrocktest.Script(call("t1"), call("t2"), bedrocktest.Text("Seen.")))
	c := converse.New(client, claude, registry(t, fetch), func(o *converse.Options) {
		o.ApprovalPolicy = func(call converse.Call) bool { return call.ID == "t2" }
	})
	_, err := c.Send(context.Background(), "Look.")
	require.ErrorIs(t, err, converse.ErrPaused)
	res, err := c.Resume(context.Background(), converse.Call{ID: "t2"}.Approve())
	require.NoError(t, err, "no request holds a document name twice")
	assert.Equal(t, "Seen.", res.Text)
	reqs := srv.Requests()
	assert.Equal(t, []string{"notes", "notes 2"}, wire.DocumentNames(reqs[len(reqs)-1].Messages...))
}
