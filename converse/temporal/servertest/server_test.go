package servertest_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/temporaltest"
	"google.golang.org/protobuf/proto"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/recording"
	ctemporal "github.com/tooluse/bedrock/converse/temporal"
	"github.com/tooluse/bedrock/converse/wirejson"
	"github.com/tooluse/bedrock/tools"
)

const claude = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

// The environment of a worker process started by the test binary itself
// (see TestMain), so that a test can kill it with SIGKILL.
const (
	envWorker = "CONVERSE_TEMPORAL_WORKER" // host:port of the Temporal frontend
	envNS     = "CONVERSE_TEMPORAL_NAMESPACE"
	envQueue  = "CONVERSE_TEMPORAL_QUEUE"
	envModel  = "CONVERSE_TEMPORAL_BEDROCK" // the bedrocktest server's URL
	envLedger = "CONVERSE_TEMPORAL_LEDGER"  // the file the tools log their runs in
	envAgent  = "CONVERSE_TEMPORAL_AGENT"   // if set, step is the tool of an agent, "stepper", which the worker's conversation calls
)

func TestMain(m *testing.M) {
	if os.Getenv(envWorker) != "" {
		runWorkerProcess()
		return
	}
	os.Exit(m.Run())
}

// stepTool is the tool of the worker tests: it logs "start ID" and "end ID"
// to the ledger file, and in a worker process, a call of "hang" never
// returns.
func stepTool(ledgerFile string, hang bool) *tools.Tool {
	t, err := tools.New("step", "Do a step.", func(ctx context.Context, in struct {
		N string `json:"n"`
	}) (string, error) {
		logRun(ledgerFile, "start "+tools.CallID(ctx))
		if hang && in.N == "hang" {
			select {} // until the process is killed
		}
		logRun(ledgerFile, "end "+tools.CallID(ctx))
		return "done " + in.N, nil
	})
	if err != nil {
		panic(err)
	}
	return t
}

func logRun(file, line string) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		panic(err)
	}
}

func readLedger(t *testing.T, file string) map[string]int {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return map[string]int{}
	}
	require.NoError(t, err)
	defer f.Close()
	out := map[string]int{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		out[s.Text()]++
	}
	return out
}

// agentOptions are the options of every worker of the worker tests: a dead
// worker's tool call is noticed at its heartbeat timeout.
func agentOptions(o *ctemporal.Options) {
	o.ToolActivity = workflow.ActivityOptions{StartToCloseTimeout: time.Minute, HeartbeatTimeout: 2 * time.Second}
}

func runWorkerProcess() {
	c, err := client.Dial(client.Options{HostPort: os.Getenv(envWorker), Namespace: os.Getenv(envNS)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bedrock := bedrockruntime.NewFromConfig(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDBEDROCKTEST", "bedrocktest-secret", ""),
		HTTPClient:   recording.PlainBodies(nil),
		BaseEndpoint: aws.String(os.Getenv(envModel)),
	})
	reg, err := tools.NewRegistry(stepTool(os.Getenv(envLedger), true))
	if err != nil {
		panic(err)
	}
	opts := agentOptions
	if os.Getenv(envAgent) != "" {
		reg, opts = stepperAgent(bedrock, reg)
	}
	w := worker.New(c, os.Getenv(envQueue), worker.Options{})
	ctemporal.New(bedrock, reg, opts).Register(w)
	if err := w.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	select {}
}

func newServer(t *testing.T) *temporaltest.TestServer {
	t.Helper()
	if testing.Short() {
		t.Skip("the Temporal server tests do not run with -short")
	}
	return temporaltest.NewServer(temporaltest.WithT(t))
}

func stepCall(id, n string) bedrocktest.Call {
	return bedrocktest.Call{ID: id, Name: "step", Input: map[string]any{"n": n}}
}

// TestWorkerKilledDuringATool kills a worker process with SIGKILL while a
// tool call runs, after its other call completed; a new worker finishes
// the conversation: the completed call is not run again, the interrupted
// one is.
func TestWorkerKilledDuringATool(t *testing.T) {
	ts := newServer(t)
	srv := bedrocktest.NewServer(bedrocktest.Script(
		bedrocktest.ToolUse("", stepCall("q1", "quick"), stepCall("h1", "hang")),
		bedrocktest.Text("Both done."),
	))
	defer srv.Close()
	ledgerFile := filepath.Join(t.TempDir(), "ledger")
	queue := "killed"

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envWorker+"="+ts.GetFrontendHostPort(), envNS+"="+ts.GetDefaultNamespace(),
		envQueue+"="+queue, envModel+"="+srv.URL, envLedger+"="+ledgerFile)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	c := ts.GetDefaultClient()
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "killed", TaskQueue: queue}, ctemporal.WorkflowName,
		ctemporal.Input{ModelID: claude, Prompt: "Do both steps."})
	require.NoError(t, err)

	// Gates: q1's completion is in the workflow's history, and h1 runs.
	require.Eventually(t, func() bool {
		return activityCompleted(t, c, run, "tool/1/q1") && readLedger(t, ledgerFile)["start h1"] == 1
	}, time.Minute, 20*time.Millisecond)
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no graceful stop
	_ = cmd.Wait()
	killed = true

	reg, err := tools.NewRegistry(stepTool(ledgerFile, false))
	require.NoError(t, err)
	ts.NewWorker(queue, ctemporal.New(srv.Client(), reg, agentOptions).Register)
	var res ctemporal.Result
	require.NoError(t, run.Get(ctx, &res))
	assert.Equal(t, "Both done.", res.Text)
	assert.Equal(t, map[string]int{"start q1": 1, "end q1": 1, "start h1": 2, "end h1": 1}, readLedger(t, ledgerFile))
}

// activityCompleted reports whether the history of run holds the
// completion of the activity id.
func activityCompleted(t *testing.T, c client.Client, run client.WorkflowRun, id string) bool {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]string{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[ev.GetEventId()] = a.GetActivityId()
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] == id {
			return true
		}
	}
	return false
}

// conversationHandler answers each conversation by its prompt, "job N":
// a call of step "N", then "done N".
func conversationHandler() bedrocktest.Handler {
	return bedrocktest.HandlerFunc(func(_ context.Context, req *bedrocktest.Request) (*bedrocktest.Reply, error) {
		first := req.Messages[0].Content[0].(*types.ContentBlockMemberText).Value
		n := strings.TrimPrefix(first, "job ")
		if len(req.Messages) == 1 {
			return bedrocktest.ToolUse("", stepCall("c"+n, n)), nil
		}
		return bedrocktest.Text("done " + n), nil
	})
}

// TestFiftyConversationsOverThreeWorkers: nothing is lost or run twice.
func TestFiftyConversationsOverThreeWorkers(t *testing.T) {
	ts := newServer(t)
	srv := bedrocktest.NewServer(conversationHandler())
	defer srv.Close()
	ledgerFile := filepath.Join(t.TempDir(), "ledger")
	reg, err := tools.NewRegistry(stepTool(ledgerFile, false))
	require.NoError(t, err)
	for range 3 {
		ts.NewWorker("fifty", ctemporal.New(srv.Client(), reg, agentOptions).Register)
	}
	c := ts.GetDefaultClient()
	ctx := context.Background()
	const n = 50
	runs := make([]client.WorkflowRun, n)
	for i := range runs {
		runs[i], err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("job-%d", i), TaskQueue: "fifty"},
			ctemporal.WorkflowName, ctemporal.Input{ModelID: claude, Prompt: fmt.Sprintf("job %d", i)})
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	texts := make([]string, n)
	errs := make([]error, n)
	for i, run := range runs {
		wg.Go(func() {
			var res ctemporal.Result
			errs[i] = run.Get(ctx, &res)
			texts[i] = res.Text
		})
	}
	wg.Wait()
	want := map[string]int{}
	for i := range n {
		require.NoError(t, errs[i], "job %d", i)
		assert.Equal(t, fmt.Sprintf("done %d", i), texts[i])
		want[fmt.Sprintf("start c%d", i)], want[fmt.Sprintf("end c%d", i)] = 1, 1
	}
	assert.Equal(t, want, readLedger(t, ledgerFile))
}

// TestLongHistoryByReference grows a conversation past 5 MB of history,
// ten times Temporal's payload limit's quarter, on a real server. Each
// large payload goes to the blob store. No payload in the workflow's
// event history is larger than the claim check's threshold.
func TestLongHistoryByReference(t *testing.T) {
	const rounds, size = 8, 700 << 10
	blobDir := filepath.Join(t.TempDir(), "blobs")
	ts := temporaltestWithBlobs(t, blobDir)
	replies := make([]*bedrocktest.Reply, 0, rounds+1)
	for i := range rounds {
		replies = append(replies, bedrocktest.ToolUse("", bedrocktest.Call{ID: fmt.Sprintf("b%d", i), Name: "blob", Input: map[string]any{}}))
	}
	srv := bedrocktest.NewServer(bedrocktest.Script(append(replies, bedrocktest.Text("That was a lot."))...))
	defer srv.Close()
	blob, err := tools.New("blob", "A large result.", func(context.Context, struct{}) (string, error) {
		return strings.Repeat("x", size), nil
	}, func(o *tools.Options) { o.MaxOutput = 2 * size })
	require.NoError(t, err)
	reg, err := tools.NewRegistry(blob)
	require.NoError(t, err)
	ts.NewWorker("long", ctemporal.New(srv.Client(), reg, func(o *ctemporal.Options) {
		o.Conversation = func(o *converse.Options) { o.MaxTurns = rounds + 1 }
		o.PayloadLimit = ctemporal.NoPayloadLimit // the claim check keeps the payloads small
	}).Register)

	c := ts.GetDefaultClient()
	ctx := context.Background()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "long", TaskQueue: "long"}, ctemporal.WorkflowName,
		ctemporal.Input{ModelID: claude, Prompt: "Fetch the blobs."})
	require.NoError(t, err)
	var res ctemporal.Result
	require.NoError(t, run.Get(ctx, &res))
	assert.Equal(t, "That was a lot.", res.Text)
	history, err := wirejson.MarshalMessages(res.State.Messages)
	require.NoError(t, err)
	assert.Greater(t, len(history), 5<<20, "the history is over 5 MB")

	it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var largest int
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		largest = max(largest, proto.Size(ev))
	}
	assert.Less(t, largest, ctemporal.DefaultClaimThreshold+64<<10, "no event carries a large payload inline")
	entries, err := os.ReadDir(blobDir)
	require.NoError(t, err)
	assert.NotEmpty(t, entries)
}

// temporaltestWithBlobs is a test server whose clients and workers use
// the claim check in dir.
func temporaltestWithBlobs(t *testing.T, dir string) *temporaltest.TestServer {
	t.Helper()
	if testing.Short() {
		t.Skip("the Temporal server tests do not run with -short")
	}
	return temporaltest.NewServer(temporaltest.WithT(t),
		temporaltest.WithBaseClientOptions(client.Options{DataConverter: ctemporal.DataConverter(ctemporal.DirBlobs(dir))}))
}
