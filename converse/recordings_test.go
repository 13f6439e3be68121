package converse_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
)

var update = flag.Bool("update", false, "record the conversations in testdata/ anew from the scripted scenarios")

// recordingsDir is the module's testdata/, which the CLI shares: its
// demo.json is not a recording of these scenarios.
const recordingsDir = "../testdata"

func recordingPath(name string) string { return filepath.Join(recordingsDir, name+".json") }

// TestRecordings replays each recorded conversation through the real SDK
// client. The replay is strict: a request whose JSON differs from the
// recorded one in any value fails the call, so the loop must send exactly
// what it sent when the conversation was recorded. Only get_current_datetime's
// results are left out of the comparison, as a clock's would be.
func TestRecordings(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			if *update {
				record(t, sc)
			}
			rec, err := recording.Load(recordingPath(sc.name))
			require.NoError(t, err, "record it with: go test ./converse -run 'TestRecordings/%s' -update", sc.name)
			srv := bedrocktest.NewServer(bedrocktest.ReplayT(t, rec, func(o *recording.ReplayOptions) { o.IgnoreToolResults = []string{"get_current_datetime"} }))
			t.Cleanup(srv.Close)

			p := play(t, sc, srv.Client())
			checkOutcome(t, sc, p)
			reqs := srv.Requests()
			assert.Len(t, reqs, len(rec.Exchanges), "every recorded exchange is used, and no more")
			checkRequests(t, sc, reqs)
			assert.Equal(t, recordedUsage(t, rec), p.usage, "usage is the sum of the recorded turns'")
		})
	}
}

// record runs the scenario against its scripted replies and saves what
// crossed the wire.
func record(t *testing.T, sc scenario) {
	t.Helper()
	srv := bedrocktest.NewServer(bedrocktest.Script(sc.replies...))
	defer srv.Close()
	rec := recording.NewRecorder(srv.HTTPClient())
	play(t, sc, srv.Client(func(o *bedrockruntime.Options) { o.HTTPClient = rec }))
	require.Len(t, rec.Recording().Exchanges, len(sc.replies), "every scripted reply is used once")
	require.NoError(t, rec.Save(recordingPath(sc.name)))
}

// played is what a scenario's conversation did.
type played struct {
	conv   *converse.Conversation
	res    *converse.Result // of the last Send
	err    error            // of the last Send
	before int              // the length of the history before the last Send
	usage  converse.Usage   // summed over every Send
	starts map[string]converse.ToolStart
	ends   map[string]converse.ToolEnd
}

// play sends the scenario's prompts, one Send each; all but the last must
// succeed.
func play(t *testing.T, sc scenario, client converse.Client) *played {
	t.Helper()
	p := &played{starts: map[string]converse.ToolStart{}, ends: map[string]converse.ToolEnd{}}
	p.conv = converse.New(client, sc.model, scenarioTools(t), func(o *converse.Options) {
		o.Stream = streamIf(sc.stream)
		if sc.opts != nil {
			sc.opts(o)
		}
		// OnEvent is never called concurrently, so the maps go without a
		// lock: the race detector holds the loop to its word.
		o.OnEvent = func(ev converse.Event) {
			switch ev := ev.(type) {
			case converse.ToolStart:
				p.starts[ev.ID] = ev
			case converse.ToolEnd:
				p.ends[ev.ID] = ev
			}
		}
	})
	for i, prompt := range sc.prompts {
		p.before = len(p.conv.History())
		p.res, p.err = p.conv.Send(t.Context(), prompt)
		if p.res != nil {
			p.usage = p.usage.Add(p.res.Usage)
		}
		if i < len(sc.prompts)-1 {
			require.NoError(t, p.err, "send %d of %d", i+1, len(sc.prompts))
		}
	}
	return p
}
