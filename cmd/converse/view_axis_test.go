package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/filestore"
)

// axisSession writes a session whose times are known to the second, from its
// start. Turn 1's model call is at 0-1 s, its calls at 1-3 s (search) and
// 1.5-2 s (a long name, approved, timed out). Turn 2's model call is at 3-4 s,
// its call at 4-6 s (truncated). Turn 3's model call is at 6-7 s.
func axisSession(t *testing.T) string {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	st := &converse.State{ModelID: viewModel, Turns: map[int]converse.TurnRecord{}}
	msg := func(role types.ConversationRole, blocks ...types.ContentBlock) {
		st.Messages = append(st.Messages, types.Message{Role: role, Content: blocks})
	}
	use := func(id, name string) types.ContentBlock {
		return &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: aws.String(id), Name: aws.String(name), Input: document.NewLazyDocument(map[string]any{})}}
	}
	answer := func(id, text string, status types.ToolResultStatus) types.ContentBlock {
		return &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: aws.String(id), Status: status,
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: text}}}}
	}
	turn := func(end float64, calls map[string]converse.CallRecord) {
		st.Turns[len(st.Messages)-1] = converse.TurnRecord{End: at(end), Duration: time.Second, StopReason: types.StopReasonToolUse,
			Usage: converse.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}, Calls: calls}
	}
	msg(types.ConversationRoleUser, &types.ContentBlockMemberText{Value: "Find it."})
	msg(types.ConversationRoleAssistant, use("a", "search"), use("b", "fetch_the_page_with_a_rather_long_tool_name"))
	turn(1, map[string]converse.CallRecord{"a": {Start: at(1), End: at(3)},
		"b": {Start: at(1.5), End: at(2), Verdict: converse.Approved, By: "the user"}})
	msg(types.ConversationRoleUser, answer("a", "found", types.ToolResultStatusSuccess),
		answer("b", `Error: tool "fetch_the_page_with_a_rather_long_tool_name" timed out after 500ms`, types.ToolResultStatusError))
	msg(types.ConversationRoleAssistant, use("c", "search"))
	turn(4, map[string]converse.CallRecord{"c": {Start: at(4), End: at(6), Truncated: true}})
	msg(types.ConversationRoleUser, answer("c", "more", types.ToolResultStatusSuccess))
	msg(types.ConversationRoleAssistant, &types.ContentBlockMemberText{Value: "Done."})
	turn(7, nil)
	dir := t.TempDir()
	require.NoError(t, filestore.Store{Dir: dir}.Save(context.Background(), "axis", st))
	return filepath.Join(dir, "axis")
}

// measureJS is the test's script, run after the page's own. It records where
// every track and every turn's bars are, in pixels. Then it clicks "expand
// all" and "collapse all", counting the open details after each.
const measureJS = `(function () {
  function box(e) { var r = e.getBoundingClientRect(); return {left: r.left, right: r.right}; }
  var out = {tracks: [], bars: {}, details: document.querySelectorAll('details').length};
  document.querySelectorAll('.track').forEach(function (t) { out.tracks.push(box(t)); });
  document.querySelectorAll('.turn').forEach(function (turn) {
    out.bars[turn.id] = [];
    turn.querySelectorAll('.bar').forEach(function (b) { out.bars[turn.id].push(box(b)); });
  });
  document.getElementById('expand').click();
  out.expanded = document.querySelectorAll('details[open]').length;
  document.getElementById('collapse').click();
  out.collapsed = document.querySelectorAll('details[open]').length;
  document.documentElement.setAttribute('data-measure', JSON.stringify(out));
})();`

type span struct{ Left, Right float64 }

type measure struct {
	Tracks                       []span
	Bars                         map[string][]span
	Details, Expanded, Collapsed int
}

// measurePage opens page in headless Chromium with measureJS added after
// the page's own script, and returns what measureJS found.
func measurePage(t *testing.T, page string) measure {
	t.Helper()
	var m measure
	require.NoError(t, json.Unmarshal([]byte(runOnPage(t, page, measureJS)), &m), "the test's script ran")
	return m
}

// runOnPage opens page in headless Chromium with script added after the
// page's own, and allowed by the page's Content-Security-Policy beside it.
// It returns the data-measure attribute the script set on the document.
func runOnPage(t *testing.T, page, script string) string {
	t.Helper()
	browser := chromium(t)
	raw, err := os.ReadFile(page)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(script))
	hash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	s := strings.Replace(string(raw), "script-src ", "script-src "+hash+" ", 1)
	s = strings.Replace(s, "</body>", "<script>"+script+"</script></body>", 1)
	measured := filepath.Join(t.TempDir(), "measured.html")
	require.NoError(t, os.WriteFile(measured, []byte(s), 0o600))
	dom := browse(t, browser, "--window-size=1100,900", "--dump-dom", "file://"+measured)
	doc, err := html.Parse(strings.NewReader(string(dom)))
	require.NoError(t, err)
	root := findAll(doc, func(n *html.Node) bool { return n.Data == "html" })[0]
	require.Equal(t, "1", attr(root, "data-view-ready"), "the page's own script ran")
	return attr(root, "data-measure")
}

// TestViewOneTimeAxis: in Chromium, every bar of the page is drawn on one time
// axis. Every track has the same left edge and width, whatever the tool's name
// and marks beside it. Each bar sits where its times put it from the
// conversation's start, so round 2's bars start right of round 1's ends.
func TestViewOneTimeAxis(t *testing.T) {
	m := measurePage(t, renderView(t, axisSession(t)))
	require.Len(t, m.Tracks, 6, "3 model calls and 3 tool calls")
	track := m.Tracks[0]
	require.Greater(t, track.Right-track.Left, 300.0)
	for i, tr := range m.Tracks {
		assert.InDelta(t, track.Left, tr.Left, 0.5, "track %d's left edge", i)
		assert.InDelta(t, track.Right, tr.Right, 0.5, "track %d's right edge", i)
	}
	at := func(s float64) float64 { return track.Left + s/7*(track.Right-track.Left) }
	want := map[string][]span{
		"turn-1": {{at(0), at(1)}, {at(1), at(3)}, {at(1.5), at(2)}},
		"turn-2": {{at(3), at(4)}, {at(4), at(6)}},
		"turn-3": {{at(6), at(7)}},
	}
	for turn, spans := range want {
		require.Len(t, m.Bars[turn], len(spans), turn)
		for i, s := range spans {
			assert.InDelta(t, s.Left, m.Bars[turn][i].Left, 1, "%s bar %d's start", turn, i)
			assert.InDelta(t, s.Right, m.Bars[turn][i].Right, 1, "%s bar %d's end", turn, i)
		}
	}
	for _, early := range m.Bars["turn-1"] {
		for _, late := range m.Bars["turn-2"] {
			assert.GreaterOrEqual(t, late.Left, early.Right-0.5, "a round-2 bar starts right of round 1's")
		}
	}
}

// TestViewExpandAll: in Chromium, under the page's Content-Security-Policy,
// "expand all" opens every call and long text, and "collapse all" closes
// them again.
func TestViewExpandAll(t *testing.T) {
	m := measurePage(t, renderView(t, knownSession(t)))
	assert.Equal(t, 6, m.Details, "5 calls and the truncated output, collapsed")
	assert.Equal(t, m.Details, m.Expanded, "expand all")
	assert.Zero(t, m.Collapsed, "collapse all")
}
