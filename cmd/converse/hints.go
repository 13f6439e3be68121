package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/dynamostore"
)

// failure is an error as the user reads it: one line saying what went wrong
// and, where it helps, what to do. It wraps the cause for errors.Is and As.
// outcome, if set, is its converse.Outcome where the cause's would mislead.
type failure struct {
	msg     string
	err     error
	outcome converse.Outcome
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return f.err }

func failf(err error, format string, args ...any) error {
	return &failure{msg: fmt.Sprintf(format, args...), err: err}
}

// where says what the hints need to know of the call that failed.
type where struct {
	model     string
	region    string
	endpoint  string // -endpoint, if set
	replay    string // -replay, if set
	session   string // -session, if set
	maxTurns  int
	maxTokens int // 0: the model's default
	noTrim    bool
}

// demoPrompt is the prompt of testdata/demo.json, the recording that
// "make demo" replays: the no-credentials hint names it.
const demoPrompt = "What is 6 times 7, and what is 10 + 10?"

// noCredentials is the failure of finding no AWS credentials.
func noCredentials(err error) error {
	detail := " (" + firstLine(err) + ")"
	if strings.Contains(err.Error(), "no EC2 IMDS role found") {
		detail = "" // the end of the default chain: nothing is configured
	}
	// The caller's to configure, even when the lookup failed on the
	// network or timed out, which would pass for a retry or a stop.
	return &failure{err: err, outcome: converse.OutcomeCaller, msg: fmt.Sprintf("no AWS credentials found%s: set AWS_BEARER_TOKEN_BEDROCK to a Bedrock API key, "+
		"or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "+
		"or pick a profile of ~/.aws/config with -profile or AWS_PROFILE (\"aws configure\", or \"aws sso login\" for SSO); "+
		"or try converse offline in a checkout of the repository: converse -replay testdata/demo.json %q", detail, demoPrompt)}
}

// explain turns an error of a conversation into a failure with a hint.
func explain(err error, w where) error {
	if err == nil {
		return nil
	}
	if f := explainConversation(err, w); f != nil {
		return f
	}
	if f := explainAPI(err, w); f != nil {
		return f
	}
	return failf(err, "%s", strings.TrimPrefix(err.Error(), "converse: "))
}

// explainConversation is explain for the errors of the loop and its
// session: nil for another error.
func explainConversation(err error, w where) error {
	var (
		budget *converse.BudgetError
		paused *converse.PausedError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return failf(err, "interrupted")
	case errors.As(err, &budget):
		return overBudget(err, budget, w)
	case errors.Is(err, converse.ErrInvalidAnswer):
		return invalidAnswer(err, w)
	case errors.As(err, &paused) && w.session != "":
		// Only a question pauses a run of the command: it asks or denies approvals.
		return failf(err, "%s\nthere was no terminal to ask at: run converse -session %s again at a terminal to answer (converse help mcp)", err, w.session)
	case errors.Is(err, converse.ErrSessionChanged) && errors.Is(err, fs.ErrNotExist):
		return failf(err, "-session %s: the session was removed during the run, so this run stopped without writing it again; run again with a prompt to start it afresh", w.session)
	case errors.Is(err, converse.ErrSessionChanged):
		return failf(err, "-session %s: another process wrote the session since this run loaded or last saved it, so this run stopped without saving over it; run again to continue from what the other saved", w.session)
	case missingTable(w.session, err) != "":
		return failf(err, "-session %s: %s", w.session, missingTable(w.session, err))
	case errors.Is(err, dynamostore.ErrItemTooLarge):
		_, size, _ := strings.Cut(err.Error(), dynamostore.ErrItemTooLarge.Error()+": ")
		return failf(err, "-session %s: the session is too large to save in DynamoDB (%s); give -session-bucket BUCKET[/PREFIX] to keep it in S3", w.session, size)
	case errors.Is(err, converse.ErrMaxTurns):
		return failf(err, "turn limit reached: the model still wanted tools after %s (-max-turns %d); raise -max-turns", plural(w.maxTurns, "model call"), w.maxTurns)
	case errors.Is(err, converse.ErrMaxTokens):
		return failf(err, "the model ran out of output tokens (max_tokens) in the middle of a tool call, which was not run; raise -max-tokens (now %s)", tokens(w.maxTokens))
	case errors.Is(err, converse.ErrContextWindowExceeded):
		return outgrown(err, w)
	case errors.Is(err, converse.ErrStreamTruncated):
		return failf(err, "the response stream broke off before the model finished (no messageStop); try again, or leave out -stream")
	}
	return nil
}

// outgrown is the failure of a conversation past the model's context
// window.
func outgrown(err error, w where) error {
	said := ""
	if invalid := (*types.ValidationException)(nil); errors.As(err, &invalid) {
		said = " (" + apiMessage(invalid) + ")"
	}
	if w.noTrim {
		return failf(err, "the conversation outgrew the context window of %s%s; leave out -no-trim, so that its oldest exchanges are dropped, or start afresh (a new -session file, or a new chat)", w.model, said)
	}
	return failf(err, "the prompt is too long for the context window of %s%s even with the history trimmed; shorten it, or give the tools smaller results", w.model, said)
}

// explainAPI is explain for the errors of Bedrock's API and the network:
// nil for another error.
func explainAPI(err error, w where) error {
	var (
		denied   *types.AccessDeniedException
		notFound *types.ResourceNotFoundException
		invalid  *types.ValidationException
		throttle *types.ThrottlingException
		quota    *types.ServiceQuotaExceededException
		netErr   *net.OpError
		api      smithy.APIError
	)
	switch {
	case errors.As(err, &denied):
		return failf(err, "access denied to model %s in region %s: %s; enable access to this model in the Amazon Bedrock console (Model access) for %s, "+
			"and check that your IAM identity may call bedrock:InvokeModel", w.model, w.region, apiMessage(denied), w.region)
	case errors.As(err, &notFound):
		return failf(err, "model %s not found in region %s: %s; check the model ID and the region "+
			"(aws bedrock list-foundation-models, aws bedrock list-inference-profiles)", w.model, w.region, apiMessage(notFound))
	case errors.As(err, &invalid):
		return explainValidation(invalid, w)
	case errors.As(err, &throttle):
		return throttled(err, throttle)
	case errors.As(err, &quota):
		return throttled(err, quota)
	case errors.As(err, &api):
		switch api.ErrorCode() {
		case "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException":
			return failf(err, "AWS did not accept the credentials (%s: %s); check them, or refresh them (\"aws sso login\")", api.ErrorCode(), apiMessage(api))
		}
		return failf(err, "Bedrock error %s: %s", api.ErrorCode(), apiMessage(api))
	case errors.As(err, &netErr):
		return failf(err, "cannot reach Bedrock%s: %v", endpointNote(w), netErr)
	}
	return nil
}

// overBudget is the failure of a -max-cost or -max-tokens-total limit
// reached: the limit and what was spent, as the library says them, and the
// flag to raise. The conversation stopped between two steps, so a -session
// resumes from there.
func overBudget(err error, b *converse.BudgetError, w where) error {
	flag := "-max-tokens-total"
	if b.Limit == "cost" {
		flag = "-max-cost"
	}
	resume := ""
	if w.session != "" {
		resume = fmt.Sprintf("; the session is kept: run converse -session %s with a higher %s and no prompt to go on", w.session, flag)
	}
	return failf(err, "%s; raise %s%s", b, flag, resume)
}

// invalidAnswer is the failure of a -schema prompt whose answer never
// matched: the library's reason, and at the turn limit how many tries
// there were. (No tool was asked for, as the turn limit's own hint would
// say.)
func invalidAnswer(err error, w where) error {
	_, why, _ := strings.Cut(err.Error(), converse.ErrInvalidAnswer.Error())
	why = strings.TrimSuffix(why, "; raise Options.MaxTurns")
	if errors.Is(err, converse.ErrMaxTurns) {
		return failf(err, "no answer matched the -schema in %s (-max-turns %d): %s%s; raise -max-turns, or see each rejected answer with -v",
			plural(w.maxTurns, "model call"), w.maxTurns, converse.ErrInvalidAnswer, why)
	}
	return failf(err, "%s%s", converse.ErrInvalidAnswer, why)
}

// explainValidation shows Bedrock's message as it is, with a hint for the
// messages whose cause is not obvious.
func explainValidation(e *types.ValidationException, w where) error {
	msg := apiMessage(e)
	switch {
	case strings.HasPrefix(msg, "recording: replay:"):
		return failf(e, "%s\nthe replay of %s answers only the requests that were recorded: the same prompts, flags and tools; "+
			"-replay-lenient serves the recorded answers without comparing", strings.TrimPrefix(msg, "recording: "), w.replay)
	case strings.Contains(msg, "model identifier is invalid"):
		return failf(e, "Bedrock rejected the request: %s (model %s, region %s); check the model ID "+
			"(aws bedrock list-foundation-models, aws bedrock list-inference-profiles)", msg, w.model, w.region)
	case strings.Contains(msg, "on-demand throughput"):
		return failf(e, "Bedrock rejected the request: %s; this model is reached through an inference profile: "+
			"prefix the model ID with the geography, e.g. -model us.%s", msg, w.model)
	}
	return failf(e, "Bedrock rejected the request: %s", msg)
}

func throttled(err error, api smithy.APIError) error {
	return failf(err, "Bedrock throttled the calls even after retries: %s; wait and try again, "+
		"allow more retries with AWS_MAX_ATTEMPTS, or ask for a higher quota", apiMessage(api))
}

func apiMessage(e smithy.APIError) string {
	if m := e.ErrorMessage(); m != "" {
		return m
	}
	return e.ErrorCode()
}

func tokens(n int) string {
	if n == 0 {
		return "the model's default"
	}
	return fmt.Sprint(n)
}

func endpointNote(w where) string {
	if w.endpoint != "" {
		return " at " + w.endpoint + " (-endpoint)"
	}
	return " in region " + w.region
}

// firstLine shortens the SDK's long credential errors to their first line.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
