package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/converse/recording"
	"github.com/tooluse/bedrock/tools"
)

const viewModel = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

// malicious is a tool output that would run script if it were not escaped:
// each payload marks the document, which the tests look for.
const malicious = `<script>window.__pwned=1;document.documentElement.setAttribute('data-pwned','script')</script>` +
	`<img src=x onerror="document.documentElement.setAttribute('data-pwned','img')">`

// renderView runs converse view on input and returns the HTML file's path.
func renderView(t testing.TB, input string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "view.html")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append(append([]string{"view", "-o", out}, args...), input), nil, &stdout, &stderr)
	require.NoError(t, err, stderr.String())
	return out
}

// TestViewRendersEveryRecording: converse view draws each recording of
// testdata/ with one turn for each answered exchange and every call of
// their replies, the input's text escaped.
func TestViewRendersEveryRecording(t *testing.T) {
	files, err := filepath.Glob("../../testdata/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			rec, err := recording.Load(f)
			require.NoError(t, err)
			answered := 0
			for _, ex := range rec.Exchanges {
				if ex.Status == 200 {
					answered++
				}
			}
			doc := parseHTML(t, renderView(t, f))
			assert.Len(t, findAll(doc, func(n *html.Node) bool { return attr(n, "class") == "turn" }), answered)
			assert.Equal(t, "recording", text(byID(t, doc, "kind")))
		})
	}
}

// knownSession runs a conversation with a filestore.Store against bedrocktest,
// in three turns. First two calls run in parallel (each waits until the other
// started), one returning the malicious output and the other an image. Then
// come a denied call, a timed-out one and a truncated one. Then comes the
// answer. It returns the session file.
func knownSession(t *testing.T) string {
	var both sync.WaitGroup
	both.Add(2)
	together := func() { both.Done(); both.Wait() }
	type none struct{}
	mk := func(name string, fn func(ctx context.Context, _ none) (any, error), opts ...func(*tools.Options)) *tools.Tool {
		tool, err := tools.New(name, "A tool.", fn, opts...)
		require.NoError(t, err)
		return tool
	}
	var pic bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 48, 24))
	for x := range 48 {
		for y := range 24 {
			img.Set(x, y, color.RGBA{R: uint8(5 * x), G: 120, B: 200, A: 255})
		}
	}
	require.NoError(t, png.Encode(&pic, img))
	reg, err := tools.NewRegistry(
		mk("lookup", func(context.Context, none) (any, error) { together(); return malicious, nil }),
		mk("chart", func(context.Context, none) (any, error) {
			together()
			return tools.Result{Output: "a chart", Media: []tools.Media{{Type: "image/png", Data: pic.Bytes()}}}, nil
		}),
		mk("send", func(context.Context, none) (any, error) { return "sent", nil }, func(o *tools.Options) { o.RequireApproval = true }),
		mk("slow", func(ctx context.Context, _ none) (any, error) { <-ctx.Done(); return nil, ctx.Err() },
			func(o *tools.Options) { o.Timeout = time.Millisecond }),
		mk("big", func(context.Context, none) (any, error) { return strings.Repeat("lorem ipsum ", 500), nil }),
	)
	require.NoError(t, err)
	calls := func(names ...string) []bedrocktest.Call {
		var cs []bedrocktest.Call
		for _, n := range names {
			cs = append(cs, bedrocktest.Call{ID: "id-" + n, Name: n, Input: map[string]any{}})
		}
		return cs
	}
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("Looking it up <b>now</b>.", calls("lookup", "chart")...),
		bedrocktest.ToolUse("Sending.", calls("send", "slow", "big")...),
		bedrocktest.Text("Done: "+malicious),
	))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	c := converse.New(srv.Client(), viewModel, reg, func(o *converse.Options) {
		o.Session, o.Tools.MaxOutput = &converse.Session{Store: filestore.Store{Dir: dir}, ID: "session"}, 1000
		o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
			return call.Deny("the test", "not today"), nil
		}
	})
	_, err = c.Send(context.Background(), "Look it up and send it.")
	require.NoError(t, err)
	return filepath.Join(dir, "session")
}

// TestViewOfASession: the page of a known session holds its turns, their stop
// reasons, the calls with their marks and times (the parallel ones
// overlapping), the image as a data: URI, and the malicious output as text. No
// element or attribute of that output made it into the page.
func TestViewOfASession(t *testing.T) {
	page := renderView(t, knownSession(t)) // the cost from the price table
	raw, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "<script>window", "escaped by html/template")
	assert.NotContains(t, string(raw), "<img src=x")
	doc := parseHTML(t, page)
	assert.Len(t, findAll(doc, func(n *html.Node) bool { return attr(n, "class") == "turn" }), 3)
	for i, stop := range []string{"stop tool_use", "stop tool_use", "stop end_turn"} {
		assert.Contains(t, text(byID(t, doc, fmt.Sprintf("turn-%d", i+1))), stop)
	}
	assert.Contains(t, text(byID(t, doc, "turn-1")), "in parallel")
	assert.Contains(t, text(byID(t, doc, "turn-1")), "Looking it up <b>now</b>.", "the model's text as text")
	lookup := byID(t, doc, "call-1-1")
	assert.Equal(t, "lookup", attr(lookup, "data-tool"))
	assert.Contains(t, text(lookup), malicious)
	assert.NotContains(t, text(lookup), "time unknown")
	imgs := findAll(byID(t, doc, "call-1-2"), func(n *html.Node) bool { return n.Data == "img" })
	require.Len(t, imgs, 1)
	assert.True(t, strings.HasPrefix(attr(imgs[0], "src"), "data:image/png;base64,iVBORw0KGgo"), attr(imgs[0], "src"))
	for id, mark := range map[string]string{"call-2-1": "denied by the test", "call-2-2": "timeout", "call-2-3": "truncated"} {
		assert.Contains(t, text(byID(t, doc, id)), mark, id)
	}
	assert.Contains(t, text(byID(t, doc, "call-2-2")), "error")
	assert.Equal(t, "3", text(byID(t, doc, "turns")))
	assert.Equal(t, "5", text(byID(t, doc, "calls")))
	assert.Equal(t, "2", text(byID(t, doc, "failed")), "the denied and the timed-out call")
	assert.Regexp(t, `^\$0\.\d{4}$`, text(byID(t, doc, "cost")))
}

// TestViewCost: the page's cost is the usage at the model's prices from
// the price table, or at -price when given; a model without known prices
// has "unknown".
func TestViewCost(t *testing.T) {
	session := knownSession(t)
	st, err := filestore.Store{Dir: filepath.Dir(session)}.Load(context.Background(), filepath.Base(session))
	require.NoError(t, err)
	require.Equal(t, converse.Usage{InputTokens: 30, OutputTokens: 15, TotalTokens: 45}, st.Usage, "three calls of bedrocktest's 10 in and 5 out")

	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hi.")))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	c := converse.New(srv.Client(), "cohere.command-r-v1:0", nil, func(o *converse.Options) {
		o.Session = &converse.Session{Store: filestore.Store{Dir: dir}, ID: "unpriced"}
	})
	_, err = c.Send(context.Background(), "Hello.")
	require.NoError(t, err)
	unpriced := filepath.Join(dir, "unpriced")

	tests := []struct {
		name, input string
		args        []string
		want        string
	}{
		// us. Claude Sonnet 4.5: $3.30 in and $16.50 out a million.
		{"price table", session, nil, fmt.Sprintf("$%.4f", (30*3.3+15*16.5)/1e6)},
		{"-price", session, []string{"-price", "1000,2000"}, "$0.0600"},
		{"-price with cache prices", session, []string{"-price", "1000,2000,1,1"}, "$0.0600"},
		{"unknown prices", unpriced, nil, "unknown (give -price)"},
		{"unknown prices, -price", unpriced, []string{"-price", "1000,2000"}, "$0.0200"}, // 10 in, 5 out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := parseHTML(t, renderView(t, tt.input, tt.args...))
			assert.Equal(t, tt.want, text(byID(t, doc, "cost")))
		})
	}
}

// TestViewInBrowser opens the page of the known session in headless
// Chromium, with the browser's own flags rather than a CDP library.
// --dump-dom gives the DOM after the page's scripts ran, which is all the
// checks need. --virtual-time-budget lets any timer or image error handler
// run first, in virtual time. --screenshot gives the picture. Expanding a
// call needs no clicking, as the page's script opens the call the URL's
// fragment names. The page's own script ran (it marks
// the document ready and opened the call), no script of the malicious
// output did, and the call shows its output. With -update the screenshot
// is kept as the module's testdata/view.png, which README shows.
func TestViewInBrowser(t *testing.T) {
	browser := chromium(t)
	page := renderView(t, knownSession(t))
	dom := browse(t, browser, "--dump-dom", "file://"+page+"#call-1-1")
	doc, err := html.Parse(bytes.NewReader(dom))
	require.NoError(t, err)
	root := findAll(doc, func(n *html.Node) bool { return n.Data == "html" })[0]
	assert.Equal(t, "1", attr(root, "data-view-ready"), "the page's own script ran")
	assert.False(t, hasAttr(root, "data-pwned"), "a script of the output ran: %s", attr(root, "data-pwned"))
	assert.NotContains(t, string(dom), "__pwned=1</script>")
	lookup := byID(t, doc, "call-1-1")
	assert.True(t, hasAttr(lookup, "open"), "the call the fragment names is expanded")
	assert.Contains(t, text(lookup), malicious, "its output, as text")
	assert.False(t, hasAttr(byID(t, doc, "call-1-2"), "open"), "the others stay collapsed")
	assert.Len(t, findAll(doc, func(n *html.Node) bool { return n.Data == "script" }), 1, "the page's own script only")
	assert.Len(t, findAll(doc, func(n *html.Node) bool { return n.Data == "img" && strings.HasPrefix(attr(n, "src"), "data:") }), 1)

	shot := filepath.Join(t.TempDir(), "view.png")
	browse(t, browser, "--window-size=1100,900", "--screenshot="+shot, "file://"+page+"#call-1-2")
	b, err := os.ReadFile(shot)
	require.NoError(t, err)
	_, err = png.Decode(bytes.NewReader(b))
	require.NoError(t, err, "the screenshot is a PNG")
	if *update {
		require.NoError(t, os.WriteFile("../../testdata/view.png", b, 0o644))
	}
}

// TestViewLargeSession: a 500-turn session with 5 MB of tool output
// renders, and Chromium loads it and runs its script; each output is
// collapsed, so the DOM holds a closed details element per call.
func TestViewLargeSession(t *testing.T) {
	browser := chromium(t)
	page := renderView(t, largeSession(t, 500, 10<<10))
	info, err := os.Stat(page)
	require.NoError(t, err)
	assert.Greater(t, info.Size(), int64(5<<20))
	dom := browse(t, browser, "--dump-dom", "file://"+page)
	doc, err := html.Parse(bytes.NewReader(dom))
	require.NoError(t, err)
	root := findAll(doc, func(n *html.Node) bool { return n.Data == "html" })[0]
	assert.Equal(t, "1", attr(root, "data-view-ready"))
	assert.Equal(t, 501, len(findAll(doc, func(n *html.Node) bool { return attr(n, "class") == "turn" })), "500 rounds and the answer")
	open := findAll(doc, func(n *html.Node) bool { return n.Data == "details" && hasAttr(n, "open") })
	assert.Empty(t, open, "everything collapsed")
}

// BenchmarkViewInChromium measures how long headless Chromium takes to load
// and lay out the page of a 500-turn session with 5 MB of tool output
// (--dump-dom returns after the load event). It compares it with a 2-turn
// page, the browser's start-up cost (see BENCHMARKS.md).
func BenchmarkViewInChromium(b *testing.B) {
	browser := chromium(b)
	for _, size := range []struct {
		name          string
		turns, output int
	}{{"turns=2", 2, 100}, {"turns=500_output=5MB", 500, 10 << 10}} {
		page := renderView(b, largeSession(b, size.turns, size.output))
		b.Run(size.name, func(b *testing.B) {
			for b.Loop() {
				browse(b, browser, "--dump-dom", "file://"+page)
			}
		})
	}
}

// largeSession writes a session of turns tool rounds, each call returning
// output bytes, and returns its file.
func largeSession(t testing.TB, turns, output int) string {
	st := &converse.State{ModelID: viewModel, Turns: map[int]converse.TurnRecord{}}
	msg := func(role types.ConversationRole, blocks ...types.ContentBlock) {
		st.Messages = append(st.Messages, types.Message{Role: role, Content: blocks})
	}
	msg(types.ConversationRoleUser, &types.ContentBlockMemberText{Value: "Go through the pages."})
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for i := range turns {
		id := fmt.Sprintf("call-%d", i)
		msg(types.ConversationRoleAssistant, &types.ContentBlockMemberText{Value: fmt.Sprintf("Reading page %d.", i)},
			&types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{ToolUseId: &id, Name: aws.String("read"), Input: document.NewLazyDocument(map[string]any{"page": i})}})
		at = at.Add(800 * time.Millisecond)
		st.Turns[len(st.Messages)-1] = converse.TurnRecord{End: at, Duration: 800 * time.Millisecond, StopReason: types.StopReasonToolUse,
			Usage: converse.Usage{InputTokens: 1000 + 3*i, OutputTokens: 40, TotalTokens: 1040 + 3*i},
			Calls: map[string]converse.CallRecord{id: {Start: at, End: at.Add(50 * time.Millisecond)}}}
		at = at.Add(50 * time.Millisecond)
		msg(types.ConversationRoleUser, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{ToolUseId: &id, Status: types.ToolResultStatusSuccess,
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: strings.Repeat(fmt.Sprintf("line %d of page %d\n", i, i), output/20)}}}})
	}
	msg(types.ConversationRoleAssistant, &types.ContentBlockMemberText{Value: "Done."})
	dir := t.TempDir()
	require.NoError(t, filestore.Store{Dir: dir}.Save(context.Background(), "large", st))
	return filepath.Join(dir, "large")
}

// chromium is the path of Debian's chromium, or skips the test.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium: install Debian's chromium package (apt-get install chromium) to run the browser tests of converse view")
	return ""
}

// browse runs headless Chromium on args and returns its standard output.
func browse(t testing.TB, browser string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(browser, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--hide-scrollbars", "--virtual-time-budget=2000", "--user-data-dir=" + t.TempDir()}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderr.Bytes())
	return out
}

func parseHTML(t testing.TB, path string) *html.Node {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	doc, err := html.Parse(f)
	require.NoError(t, err)
	return doc
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			out = append(out, d)
		}
	}
	return out
}

func byID(t testing.TB, doc *html.Node, id string) *html.Node {
	t.Helper()
	found := findAll(doc, func(n *html.Node) bool { return attr(n, "id") == id })
	require.Len(t, found, 1, "element #%s", id)
	return found[0]
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

// TestViewOfJSONOutput: the output of converse -json over three prompts of one
// -session is drawn from the last object's history. The prompts are a
// calculation in two model calls, a greeting in one, and a prompt that fails
// at -max-turns, its reply kept in its history. Each prompt shows what its
// object holds: its model calls, tokens, cost, stop reason and error. A turn
// shows the stop reason of its prompt's last call, and the tokens of a prompt
// of one call. No object holds a time, nor the tokens of one call of several,
// so those stay unknown.
func TestViewOfJSONOutput(t *testing.T) {
	session := filepath.Join(t.TempDir(), "session")
	var jsonOut strings.Builder
	for _, p := range []struct {
		script bedrocktest.Handler
		args   []string
		code   int
	}{
		{multiply(), []string{"What is 6 times 7?"}, 0},
		{bedrocktest.Script(bedrocktest.Text("Hi.")), []string{"Say hi."}, 0},
		{multiply(), []string{"-max-turns", "1", "And 6 times 7 again?"}, 5},
	} {
		srv := newServer(t, p.script)
		out := runInProcess(t, nil, append([]string{"-endpoint", srv.URL, "-model", viewModel, "-session", session, "-json"}, p.args...)...)
		require.Equal(t, p.code, out.code, out.stderr)
		jsonOut.WriteString(out.stdout)
	}
	in := filepath.Join(t.TempDir(), "out.json")
	require.NoError(t, os.WriteFile(in, []byte(jsonOut.String()), 0o600))
	doc := parseHTML(t, renderView(t, in))
	assert.Equal(t, "-json output", text(byID(t, doc, "kind")))
	assert.Equal(t, "4", text(byID(t, doc, "turns")), "the failed prompt's history holds its reply")
	assert.Equal(t, "40", text(byID(t, doc, "tokens-in")), "four model calls of bedrocktest's 10 in")
	assert.Equal(t, "20", text(byID(t, doc, "tokens-out")))
	// us. Claude Sonnet 4.5: $3.30 in and $16.50 out a million, as -json's costUSD.
	assert.Equal(t, fmt.Sprintf("$%.4f", (40*3.3+20*16.5)/1e6), text(byID(t, doc, "cost")))
	mustContain(t, "prompt 1", text(byID(t, doc, "prompt-1")), "2 model calls, tokens 20 in, 10 out, $0.0002, stop end_turn")
	mustContain(t, "prompt 2", text(byID(t, doc, "prompt-2")), "1 model call, tokens 10 in, 5 out, $0.0001, stop end_turn")
	mustContain(t, "prompt 3", text(byID(t, doc, "prompt-3")), "1 model call, tokens 10 in, 5 out, $0.0001, stop tool_use", "error: turn limit reached")
	assert.Contains(t, text(byID(t, doc, "call-1-1")), "42")
	for turn, want := range map[string][]string{
		"turn-1": {"model call unknown", "stop unknown", "tokens unknown"},
		"turn-2": {"model call unknown", "stop end_turn", "tokens unknown"},
		"turn-3": {"model call unknown", "stop end_turn", "tokens 10 in, 5 out"},
		"turn-4": {"model call unknown", "stop tool_use", "tokens 10 in, 5 out"},
	} {
		mustContain(t, turn, text(byID(t, doc, turn)), want...)
	}
	assert.Contains(t, text(byID(t, doc, "call-4-1")), "unanswered")
	assert.Contains(t, text(doc), "-json output holds no times")
}

// TestViewOfJSONPromptWithoutMessage: an object of -json output whose
// prompt added no message to the history (it failed first) still shows,
// after the last message, with its error.
func TestViewOfJSONPromptWithoutMessage(t *testing.T) {
	history := `[{"role":"user","content":[{"text":"hello"}]},{"role":"assistant","content":[{"text":"hi"}]}]`
	in := filepath.Join(t.TempDir(), "out.json")
	require.NoError(t, os.WriteFile(in, []byte(`{"model":"m","text":"hi","stopReason":"end_turn","turns":1,"usage":{"inputTokens":5,"outputTokens":2,"totalTokens":7},"history":`+history+`}
{"model":"m","text":"","turns":0,"usage":{"inputTokens":0,"outputTokens":0,"totalTokens":0},"history":`+history+`,"error":"no credentials"}
`), 0o600))
	doc := parseHTML(t, renderView(t, in))
	mustContain(t, "prompt 1", text(byID(t, doc, "prompt-1")), "1 model call, tokens 5 in, 2 out, stop end_turn")
	mustContain(t, "turn 1", text(byID(t, doc, "turn-1")), "stop end_turn", "tokens 5 in, 2 out")
	mustContain(t, "prompt 2", text(byID(t, doc, "prompt-2")), "0 model calls", "error: no credentials")
	sections := findAll(doc, func(n *html.Node) bool { return n.Data == "main" })[0]
	last := sections.LastChild
	for last != nil && last.Type != html.ElementNode {
		last = last.PrevSibling
	}
	require.NotNil(t, last)
	assert.Equal(t, "prompt-2", attr(last, "id"), "after the last message")
}

// TestViewCallMarks: what marks a call: a call cancelled while its tool
// ran (Ctrl-C) is cancelled, not abandoned, which is a hung call answered
// at its timeout and still running.
func TestViewCallMarks(t *testing.T) {
	resultOf := func(text string) json.RawMessage {
		b, err := json.Marshal(map[string]any{"toolUseId": "c1", "status": "error", "content": []any{map[string]any{"text": text}}})
		require.NoError(t, err)
		return b
	}
	for _, tt := range []struct {
		name string
		raw  json.RawMessage
		cr   converse.CallRecord
		want []string
	}{
		{"cancelled", resultOf(`Error: tool "hang" was cancelled: context canceled`), converse.CallRecord{Abandoned: true}, []string{"error", "cancelled"}},
		{"hung past its timeout", resultOf(`Error: tool "hang" timed out after 1s: context deadline exceeded`), converse.CallRecord{Abandoned: true}, []string{"error", "timeout", "abandoned"}},
		{"timed out", resultOf(`Error: tool "slow" timed out after 1s: context deadline exceeded`), converse.CallRecord{}, []string{"error", "timeout"}},
		{"unanswered", nil, converse.CallRecord{}, []string{"unanswered"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, marks := resultMarks(tt.raw, tt.cr)
			assert.Equal(t, tt.want, marks)
		})
	}
}

// TestViewShowsBidiControls: the bidirectional formatting characters of a
// model's or tool's text (Trojan Source) are shown as \u escapes, as on a
// terminal, and each text is isolated, so none reorders the page.
func TestViewShowsBidiControls(t *testing.T) {
	var history strings.Builder
	history.WriteString(`[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"text":"rm -rf \u202e/ txt.exe\u202c"},`)
	history.WriteString(`{"toolUse":{"toolUseId":"c\u2067","name":"ev\u202eil","input":{"a":"\u2066x\u2069"}}}]},`)
	history.WriteString(`{"role":"user","content":[{"toolResult":{"toolUseId":"c\u2067","status":"success","content":[{"text":"\u200fok\u200e\u061c"}]}}]},`)
	history.WriteString(`{"role":"assistant","content":[{"text":"done"}]}]`)
	in := filepath.Join(t.TempDir(), "out.json")
	require.NoError(t, os.WriteFile(in, []byte(`{"model":"m\u202b","text":"done","turns":2,"usage":{"inputTokens":5,"outputTokens":2,"totalTokens":7},"history":`+history.String()+"}\n"), 0o600))
	page := renderView(t, in)
	raw, err := os.ReadFile(page)
	require.NoError(t, err)
	for _, r := range []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c} {
		assert.NotContains(t, string(raw), string(r), "U+%04X on the page", r)
	}
	doc := parseHTML(t, page)
	mustContain(t, "turn 1", text(byID(t, doc, "turn-1")), `rm -rf \u202e/ txt.exe\u202c`, `ev\u202eil`, `\u2066x\u2069`, `\u200fok\u200e\u061c`, `c\u2067`)
	assert.Contains(t, string(raw), "unicode-bidi:isolate")
}

// TestViewUsageErrors: a bad flag is reported once, as for the main command.
// An input that is not there or not a transcript is a usage error (exit 2), as
// help exit says. -h prints the usage on standard output.
func TestViewUsageErrors(t *testing.T) {
	notJSON := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(notJSON, []byte("hello"), 0o600))
	for _, tt := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"bad flag", []string{"view", "-bogus", "x"}, 2, "converse: view: flag provided but not defined: -bogus (run converse view -h for usage)\n"},
		{"no such file", []string{"view", "/nonexist"}, 2, "converse: view: open /nonexist: no such file or directory\n"},
		{"not a transcript", []string{"view", notJSON}, 2, ""},
		{"two inputs", []string{"view", "a", "b"}, 2, "converse: view: want one INPUT file, got 2 arguments\n"},
		{"no input", []string{"view"}, 2, "converse: view: no INPUT file: want converse view [-o FILE] [-price IN,OUT[,READ,WRITE]] INPUT (a prompt \"view\" goes after --: converse -- view)\n"},
		{"no input after a flag", []string{"view", "-o", "page.html"}, 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := runInProcess(t, nil, tt.args...)
			assert.Equal(t, tt.code, out.code, out.stderr)
			assert.Empty(t, out.stdout)
			assert.Equal(t, 1, strings.Count(out.stderr, "converse: "), "one line: %q", out.stderr)
			if tt.stderr != "" {
				assert.Equal(t, tt.stderr, out.stderr)
			}
		})
	}
	out := runInProcess(t, nil, "view", "-h")
	assert.Equal(t, 0, out.code, out.stderr)
	assert.Empty(t, out.stderr)
	mustContain(t, "stdout", out.stdout, "usage: converse view", "-price")
}

// TestViewWithoutInputCallsNoModel: "converse view" without its file is a
// usage error, not the prompt "view" sent to the model (a paid call); the
// prompt goes after --.
func TestViewWithoutInputCallsNoModel(t *testing.T) {
	model := newServer(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
	t.Setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", model.URL)
	out := runInProcess(t, nil, "view")
	assert.Equal(t, 2, out.code, out.stderr)
	assert.Contains(t, out.stderr, "no INPUT file")
	assert.Empty(t, model.Requests(), "no model call")

	out = runInProcess(t, nil, "--", "view")
	require.Equal(t, 0, out.code, out.stderr)
	assert.Equal(t, "Hi.\n", out.stdout)
	require.Len(t, model.Requests(), 1, "the prompt after --")
}
