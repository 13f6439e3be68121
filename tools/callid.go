package tools

import "context"

// callIDKey is the context key of a call's id.
type callIDKey struct{}

// WithCallID returns a copy of ctx that tells a tool which call it is
// running: for a Bedrock conversation, the toolUseId the model gave the
// call. An executor sets it on the context it passes to [Tool.Call]; a tool
// reads it with [CallID], for example to pass it on to the service that does
// the work.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID returns the id of the call that ctx was given for by [WithCallID],
// or "" if none was.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
