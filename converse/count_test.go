package converse_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
)

// counter makes a step's token count for an engine.
type counter func(ctx context.Context, in *bedrockruntime.CountTokensInput) (*bedrockruntime.CountTokensOutput, error)

// countingScenario is stepScenario with its ContextPolicy counting tokens.
func countingScenario(t *testing.T) (bedrocktest.Handler, []func(*converse.Options)) {
	h, _, opts := stepScenario(t)
	counting := func(o *converse.Options) {
		p := *o.Context
		p.CountTokens = true
		o.Context = &p
	}
	return h, []func(*converse.Options){opts, counting}
}

// TestStepsCountAsSendCounts: a conversation whose ContextPolicy counts
// tokens, driven by Send and by a hand-written step loop, makes the same
// requests, counts included, and ends in the same state. Each turn's
// request is counted once, before it is sized.
func TestStepsCountAsSendCounts(t *testing.T) {
	ctx := context.Background()
	const prompt = "Read the archive and tell ops."
	h, opts := countingScenario(t)
	sendSrv, sendClient := serve(t, h, func(o *bedrocktest.Options) { o.Accounting = true })
	var trims int
	_, reg, _ := stepScenario(t)
	bySend := converse.New(sendClient, claude, reg, append(opts, func(o *converse.Options) {
		o.Approver = func(_ context.Context, call converse.Call) (converse.Decision, error) {
			return converse.Decision{ID: call.ID, Verdict: converse.Approved}, nil
		}
		o.OnEvent = func(ev converse.Event) {
			if _, ok := ev.(converse.Trimmed); ok {
				trims++
			}
		}
	})...)
	want, err := bySend.Send(ctx, prompt)
	require.NoError(t, err)
	require.Positive(t, trims, "the scenario trims")

	h, opts = countingScenario(t)
	stepSrv, stepClient := serve(t, h, func(o *bedrocktest.Options) { o.Accounting = true })
	_, reg, _ = stepScenario(t)
	byHand := converse.New(nil, claude, reg, opts...)
	got, err := driveSteps(ctx, byHand, engine{call: converseWith(stepClient), count: func(ctx context.Context, in *bedrockruntime.CountTokensInput) (*bedrockruntime.CountTokensOutput, error) {
		return stepClient.CountTokens(ctx, in)
	}}, prompt)
	require.NoError(t, err)

	assert.Equal(t, want.Text, got.Text)
	assert.Equal(t, want.Usage, got.Usage)
	sent, driven := sendSrv.Requests(), stepSrv.Requests()
	require.Len(t, driven, len(sent))
	var counts, turns int
	for i := range sent {
		assert.Equal(t, sent[i].Operation, driven[i].Operation, "request %d", i+1)
		assert.JSONEq(t, string(sent[i].Body), string(driven[i].Body), "request %d", i+1)
		switch {
		case sent[i].Operation == bedrocktest.OpCountTokens:
			counts++
			assert.NotEqual(t, bedrocktest.OpCountTokens, sent[i+1].Operation, "request %d: one count for each history", i+1)
		case !strings.Contains(string(sent[i].Body), "Summarize the conversation so far"):
			turns++
		}
	}
	assert.Equal(t, turns, counts, "each turn's request is counted once")
	assert.Equal(t, bySend.History(), byHand.History())
	assertValid(t, byHand, claude)
}

// TestCountGivenTwiceIsStale: an engine that delivers at least once hands
// a count twice, or one for another request: each is ErrStaleStep and
// changes nothing. The count asked for is the turn's request.
func TestCountGivenTwiceIsStale(t *testing.T) {
	ctx := context.Background()
	srv, client := serve(t, bedrocktest.Script(bedrocktest.Text("Hi.")))
	system := []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}}
	c := converse.New(nil, claude, nil, func(o *converse.Options) {
		o.Request.System = system
		o.Context = &converse.ContextPolicy{MaxInputTokens: 10000, CountTokens: true}
	})
	step, err := c.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Hello."}}})
	require.NoError(t, err)
	req := step.CountTokens
	require.NotNil(t, req)
	assert.Nil(t, step.ModelCall)
	assert.Equal(t, claude, aws.ToString(req.ModelId))
	in := req.Input.(*types.CountTokensInputMemberConverse).Value
	assert.Equal(t, c.History(), in.Messages)
	assert.Equal(t, system, in.System)

	copied := *req
	_, err = c.HandleCount(ctx, &copied, &bedrockruntime.CountTokensOutput{InputTokens: aws.Int32(12)}, nil)
	require.ErrorIs(t, err, converse.ErrStaleStep, "a count for another request")
	step, err = c.HandleCount(ctx, req, &bedrockruntime.CountTokensOutput{InputTokens: aws.Int32(12)}, nil)
	require.NoError(t, err)
	call := step.ModelCall
	require.NotNil(t, call)
	history := c.History()
	_, err = c.HandleCount(ctx, req, &bedrockruntime.CountTokensOutput{InputTokens: aws.Int32(12)}, nil)
	require.ErrorIs(t, err, converse.ErrStaleStep, "the count given twice")
	assert.Equal(t, history, c.History())

	out, err := client.Converse(ctx, call.Input)
	require.NoError(t, err)
	step, err = c.HandleResponse(ctx, call, out, nil)
	require.NoError(t, err, "the model call is still the one awaited")
	require.NotNil(t, step.Result)
	assert.Equal(t, "Hi.", step.Result.Text)
	assert.Len(t, srv.Requests(), 1)
}

// countless is a client without a CountTokens method.
type countless struct{ converse.Client }

// failingCounter is a client whose CountTokens answers out and err.
type failingCounter struct {
	converse.Client
	out *bedrockruntime.CountTokensOutput
	err error
}

func (f failingCounter) CountTokens(context.Context, *bedrockruntime.CountTokensInput, ...func(*bedrockruntime.Options)) (*bedrockruntime.CountTokensOutput, error) {
	return f.out, f.err
}

// archiveRun runs the conversation of readArchive (12 pages through a
// window of 4,000 tokens, trimmed before each call) with opts, the way run
// drives it. It returns the bodies of the Converse requests the server
// received, the trims, the log and how many counts the server answered.
func archiveRun(t *testing.T, opts func(*converse.Options), run func(ctx context.Context, client *bedrockruntime.Client, opts func(*converse.Options)) error) (bodies []string, trims []converse.Trimmed, log string, counts int) {
	t.Helper()
	srv, client := serve(t, bedrocktest.Script(fetchLoop(12)...), func(o *bedrocktest.Options) {
		o.MaxInputTokens = 4000
		o.Accounting = true
	})
	var buf bytes.Buffer
	err := run(context.Background(), client, func(o *converse.Options) {
		o.MaxTurns = 24
		opts(o)
		o.Logger = slog.New(slog.NewTextHandler(&buf, nil))
		o.OnEvent = func(ev converse.Event) {
			if tr, ok := ev.(converse.Trimmed); ok {
				trims = append(trims, tr)
			}
		}
	})
	require.NoError(t, err)
	for _, req := range srv.Requests() {
		if req.Operation == bedrocktest.OpCountTokens {
			counts++
			continue
		}
		bodies = append(bodies, string(req.Body))
	}
	return bodies, trims, buf.String(), counts
}

// TestFailedCountEstimates: a count that fails, answers no tokens, or that
// the client cannot make leaves the steps to the estimate. The requests
// and trims are those of a policy that does not count. Send logs a failed
// call, and not a client that cannot count.
func TestFailedCountEstimates(t *testing.T) {
	const prompt = "Read pages 1 to 12 of the archive."
	policy := func(count bool) func(*converse.Options) {
		return func(o *converse.Options) {
			o.Context = &converse.ContextPolicy{MaxInputTokens: 3500, CountTokens: count}
		}
	}
	send := func(wrap func(converse.Client) converse.Client) func(context.Context, *bedrockruntime.Client, func(*converse.Options)) error {
		return func(ctx context.Context, client *bedrockruntime.Client, opts func(*converse.Options)) error {
			_, err := converse.New(wrap(client), claude, fetchTool(t, 250), opts).Send(ctx, prompt)
			return err
		}
	}
	steps := func(out *bedrockruntime.CountTokensOutput, err error) func(context.Context, *bedrockruntime.Client, func(*converse.Options)) error {
		return func(ctx context.Context, client *bedrockruntime.Client, opts func(*converse.Options)) error {
			failing := func(context.Context, *bedrockruntime.CountTokensInput) (*bedrockruntime.CountTokensOutput, error) {
				return out, err
			}
			var o converse.Options // the driver reports the steps' events where OnEvent would
			opts(&o)
			_, err := driveSteps(ctx, converse.New(nil, claude, fetchTool(t, 250), opts), engine{call: converseWith(client), count: failing, report: o.OnEvent}, prompt)
			return err
		}
	}
	throttled := bedrocktest.Throttling()
	wantBodies, wantTrims, _, _ := archiveRun(t, policy(false), send(func(c converse.Client) converse.Client { return c }))
	require.NotEmpty(t, wantTrims)
	for _, tt := range []struct {
		name   string
		run    func(context.Context, *bedrockruntime.Client, func(*converse.Options)) error
		logged bool
	}{
		{"Send, a client without CountTokens", send(func(c converse.Client) converse.Client { return countless{c} }), false},
		{"Send, CountTokens fails", send(func(c converse.Client) converse.Client { return failingCounter{Client: c, err: throttled} }), true},
		{"Send, no inputTokens", send(func(c converse.Client) converse.Client {
			return failingCounter{Client: c, out: &bedrockruntime.CountTokensOutput{}}
		}), true},
		{"steps, an error", steps(nil, errors.New("no counts here")), false},
		{"steps, no inputTokens", steps(&bedrockruntime.CountTokensOutput{}, nil), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bodies, trims, log, counts := archiveRun(t, policy(true), tt.run)
			assert.Zero(t, counts)
			require.Len(t, bodies, len(wantBodies))
			for i := range bodies {
				assert.JSONEq(t, wantBodies[i], bodies[i], "request %d", i+1)
			}
			assert.Equal(t, wantTrims, trims)
			assert.Equal(t, tt.logged, strings.Contains(log, "CountTokens failed; estimating"), "log: %s", log)
			if tt.logged {
				assert.Equal(t, len(bodies), strings.Count(log, "CountTokens failed"), "one failed count a turn")
			}
		})
	}
}

// TestCountOncePerOverflow: a policy that trims only on Bedrock's overflow
// counts only the request that overflowed, once, for its limit and its
// trim alike.
func TestCountOncePerOverflow(t *testing.T) {
	srv, _, _, trims := readArchive(t, 8000, 6, 1667, converse.ContextPolicy{CountTokens: true})
	var counts int
	for _, req := range srv.Requests() {
		if req.Operation == bedrocktest.OpCountTokens {
			counts++
		}
	}
	assert.Equal(t, len(trims), counts)
}

// TestCountSizesTheRequest: the count a driver obtained, not the estimate,
// decides the trim, and is the Trimmed event's TokensBefore.
func TestCountSizesTheRequest(t *testing.T) {
	ctx := context.Background()
	_, client := serve(t, bedrocktest.Script(bedrocktest.Text("First."), bedrocktest.Text("Second.")))
	var trims []converse.Trimmed
	c := converse.New(nil, claude, nil, func(o *converse.Options) {
		o.Context = &converse.ContextPolicy{MaxInputTokens: 10000, CountTokens: true}
	})
	trimsOf := func(step *converse.Step) {
		for _, ev := range step.Events {
			if tr, ok := ev.(converse.Trimmed); ok {
				trims = append(trims, tr)
			}
		}
	}
	send := func(prompt string, tokens int32) *converse.Result {
		step, err := c.Begin(ctx, types.Message{Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: prompt}}})
		require.NoError(t, err)
		require.NotNil(t, step.CountTokens)
		step, err = c.HandleCount(ctx, step.CountTokens, &bedrockruntime.CountTokensOutput{InputTokens: aws.Int32(tokens)}, nil)
		require.NoError(t, err)
		trimsOf(step)
		require.NotNil(t, step.ModelCall)
		out, callErr := client.Converse(ctx, step.ModelCall.Input)
		step, err = c.HandleResponse(ctx, step.ModelCall, out, callErr)
		require.NoError(t, err)
		return step.Result
	}
	send("A short question.", 10)
	require.Empty(t, trims)
	res := send("Another short one.", 50000) // far over the limit, by the count alone
	assert.Equal(t, "Second.", res.Text)
	require.Len(t, trims, 1)
	assert.Equal(t, 50000, trims[0].TokensBefore)
	assert.Equal(t, 2, trims[0].DroppedMessages, "the first exchange is dropped")
	assert.Len(t, c.History(), 2)
}
