package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/dynamostore"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/converse/trace"
	"github.com/tooluse/bedrock/tools"
)

// dynamoSession splits a -session of the form dynamodb://TABLE/SESSION-ID;
// ok is false for a file.
func dynamoSession(session string) (table, id string, ok bool) {
	rest, ok := strings.CutPrefix(session, "dynamodb://")
	if !ok {
		return "", "", false
	}
	table, id, _ = strings.Cut(rest, "/")
	return table, id, true
}

// sessionStore is the store of -session and the session's id in it: for a
// file, its directory, with the file's name as the id; for
// dynamodb://TABLE/SESSION-ID, the table's dynamoStore.
func sessionStore(ctx context.Context, s *settings) (converse.Store, string, error) {
	table, id, ok := dynamoSession(s.session)
	if !ok {
		return filestore.Store{Dir: filepath.Dir(s.session)}, filepath.Base(s.session), nil
	}
	store, err := dynamoStore(ctx, s, table)
	return store, id, err
}

// servedStore is the store of converse serve's -sessions, whose sessions
// the runtime's session ids name: a filestore.Store of the directory, or, for
// dynamodb://TABLE, the table's dynamoStore, whose items -session
// dynamodb://TABLE/SESSION-ID opens too.
func servedStore(ctx context.Context, s *settings) (converse.Store, error) {
	table, ok := strings.CutPrefix(s.sessions, "dynamodb://")
	if !ok {
		return filestore.Store{Dir: s.sessions}, nil
	}
	return dynamoStore(ctx, s, table)
}

// dynamoStore is the store of the sessions of a DynamoDB table, gzipped,
// with the S3 bucket of -session-bucket for sessions past 400 KB. The
// clients take the AWS configuration as the SDK loads it,
// AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_S3 included.
func dynamoStore(ctx context.Context, s *settings, table string) (converse.Store, error) {
	cfg, err := loadConfig(ctx, s)
	if err != nil {
		return nil, err
	}
	var client *s3.Client
	bucket, prefix, _ := strings.Cut(s.sessionBucket, "/")
	if bucket != "" {
		client = s3Client(cfg)
		if prefix != "" && !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
	}
	return dynamostore.New(dynamodb.NewFromConfig(cfg), table, func(o *dynamostore.Options) {
		o.S3, o.Bucket, o.Prefix, o.Gzip = client, bucket, prefix, true
	}), nil
}

// s3Client is the client of the S3 objects of sessions past DynamoDB's
// item limit.
func s3Client(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = o.BaseEndpoint != nil // a local S3, such as AWS_ENDPOINT_URL_S3, has no bucket host names
	})
}

// openConversation starts the conversation, or restores it from the
// -session file if there is one; with -session it is saved there at every
// step. A session file that cannot be read is a usage error.
//
// opts sets the options for the conversation's model, which a restored
// session names.
func openConversation(ctx context.Context, s *settings, client converse.Client, model string, reg *tools.Registry, opts func(o *converse.Options, model string)) (*converse.Conversation, error) {
	forModel := func(model string) func(*converse.Options) {
		return func(o *converse.Options) { opts(o, model) }
	}
	if s.session == "" {
		return converse.New(client, model, reg, forModel(model)), nil
	}
	store, id, err := sessionStore(ctx, s)
	if err != nil {
		return nil, err
	}
	withStore := func(model string) func(*converse.Options) {
		return func(o *converse.Options) {
			opts(o, model)
			o.Session = &converse.Session{Store: store, ID: id}
		}
	}
	st, err := store.Load(ctx, id)
	if errors.Is(err, fs.ErrNotExist) {
		return converse.New(client, model, reg, withStore(model)), nil
	}
	if err != nil {
		return nil, &usageError{sessionError(s.session, err)}
	}
	if s.set["model"] && st.ModelID != model {
		return nil, usagef("-session %s is a conversation with %s, not %s", s.session, trace.Printable(st.ModelID), trace.Printable(model))
	}
	conv, err := converse.Restore(client, reg, st, withStore(st.ModelID))
	if err != nil {
		return nil, &usageError{sessionError(s.session, err)}
	}
	return conv, nil
}

// nothingToResume is the usage error of a -session run without a prompt
// that found nothing to resume: the session is not there yet, or its
// conversation is finished.
func nothingToResume(ctx context.Context, s *settings) error {
	store, id, err := sessionStore(ctx, s)
	if err == nil {
		_, err = store.Load(ctx, id)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return usagef("-session %s does not exist yet: give a prompt to start the conversation", s.session)
	}
	return usagef("-session %s is finished: give a prompt to continue it", s.session)
}

// sessionError is err, a failure to load or restore the -session file at
// path, as one line naming the file once: the library's prefixes
// ("filestore: load session PATH: converse: state: ...") are dropped.
func sessionError(path string, err error) error {
	if hint := missingTable(path, err); hint != "" {
		return &restated{"-session " + path + ": " + hint, err}
	}
	if errors.Is(err, filestore.ErrNotSessionFile) {
		_, why, _ := strings.Cut(err.Error(), filestore.ErrNotSessionFile.Error()+": ")
		return &restated{fmt.Sprintf("-session %s is not a session file (%s): move it aside, or give another -session", path, why), err}
	}
	msg := err.Error()
	_, id, _ := dynamoSession(path)
	for _, prefix := range []string{"filestore: load session " + path + ": ", "filestore: load session: ", fmt.Sprintf("dynamostore: load session %q: ", id), "converse: "} {
		msg = strings.TrimPrefix(msg, prefix)
	}
	msg = strings.TrimPrefix(msg, "converse: ") // a state error under a load error
	if rest, ok := strings.CutPrefix(msg, "state: "); ok {
		msg = "state " + rest
	}
	return &restated{fmt.Sprintf("-session %s: %s", path, msg), err}
}

// missingTable is the message of err, if it is DynamoDB's for the table of
// -session dynamodb://TABLE/ID when that table does not exist: which
// table, and how to make it. It is "" for any other error.
func missingTable(session string, err error) string {
	var notFound *dbtypes.ResourceNotFoundException
	table, _, ok := dynamoSession(session)
	if !ok || !errors.As(err, &notFound) {
		return ""
	}
	return fmt.Sprintf("the DynamoDB table %s does not exist (in this account and region): create it, as converse help session shows, or name another table", trace.Printable(table))
}

// restated is an error with a message of the CLI's own; errors.Is and As
// still see the error it restates.
type restated struct {
	msg string
	err error
}

func (e *restated) Error() string { return e.msg }
func (e *restated) Unwrap() error { return e.err }

// approver decides the calls of the manifest tools marked "approve". -yes
// approves them all. Otherwise the user is asked on the terminal. With no
// terminal the call is denied, so that the model hears why and the
// conversation ends normally. It answers a call's question too (see
// answerQuestion).
func (ss *session) approver(stdin io.Reader) func(context.Context, converse.Call) (converse.Decision, error) {
	return func(ctx context.Context, call converse.Call) (converse.Decision, error) {
		if call.Question != nil { // -yes approves calls, it answers no question
			return ss.answerQuestion(ctx, stdin, call), nil
		}
		if ss.s.yes {
			return call.Approve(), nil
		}
		ss.print.EndText()
		// The question starts afresh and quotes the tool's name, so that
		// what the model wrote before cannot hide or imitate it.
		question := fmt.Sprintf("Run %s %s? [y/N] ", strconv.Quote(call.Tool), approvalInput(call.Input))
		answer, asked, ok := ss.ask(ctx, stdin, question)
		switch {
		case !asked:
			return call.Deny("converse", "there is no terminal to ask for approval (run with -yes to approve the calls)"), nil
		case !ok:
			return call.Deny("the user", "no answer at the terminal"), nil
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
			return call.Approve(), nil
		}
		return call.Deny("the user", "not approved at the terminal"), nil
	}
}

// approvalInput is the input of a call as the approval question shows it. It
// shows all of it, as the user approves all of it (the trace's cut at 300
// characters could hide what matters). It is compact JSON, which keeps the
// strings as they are, and quoted if a character of it does not print.
func approvalInput(in json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, in); err != nil {
		return trace.Printable(string(in))
	}
	return trace.Printable(b.String())
}

// ask puts question on a reset, cleared line of the terminal and reads the
// answer: with the chat's line reader when it chats (a Ctrl-C there
// cancels the turn), else a line of the terminal. asked is false when
// there is no terminal; ok is false when it ended (or the conversation was
// interrupted) without an answer.
func (ss *session) ask(ctx context.Context, stdin io.Reader, question string) (answer string, asked, ok bool) {
	if ss.lines != nil {
		io.WriteString(ss.term, resetLine)
		answer, err := ss.lines.readAnswer(ctx, question)
		if errors.Is(err, errCtrlC) {
			ss.cancelTurn()
		}
		return answer, true, err == nil
	}
	tty, closeTTY := approvalTerminal(stdin)
	if tty == nil {
		return "", false, false
	}
	defer closeTTY()
	fmt.Fprint(tty, resetLine+question)
	answer, err := bufio.NewReader(tty).ReadString('\n')
	if err != nil && answer == "" {
		fmt.Fprintln(tty)
		return "", true, false
	}
	return answer, true, true
}

// approvalTerminal opens the terminal to ask on: /dev/tty, else standard input if
// it is one. It returns nil when there is none.
func approvalTerminal(stdin io.Reader) (io.ReadWriter, func()) {
	if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		return f, func() { f.Close() }
	}
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		return struct {
			io.Reader
			io.Writer
		}{f, os.Stderr}, func() {}
	}
	return nil, func() {}
}

// resume continues the -session conversation if it was interrupted,
// deciding its pending calls first, and reports it as send does. It
// returns false when there was nothing to resume.
func (ss *session) resume(ctx context.Context, stdin io.Reader) (bool, error) {
	var decisions []converse.Decision
	approve := ss.approver(stdin)
	for _, call := range ss.conv.State().Pending {
		d, err := approve(ctx, call)
		if err != nil {
			return true, err
		}
		if d.Verdict == converse.Paused { // a question, with no terminal to ask it
			return true, ss.report(nil, &converse.PausedError{Pending: ss.conv.State().Pending})
		}
		decisions = append(decisions, d)
	}
	ss.print.status.begin()
	res, err := ss.conv.Resume(ctx, decisions...)
	ss.print.status.end()
	if errors.Is(err, converse.ErrNothingToResume) {
		return false, nil
	}
	return true, ss.report(res, err)
}
