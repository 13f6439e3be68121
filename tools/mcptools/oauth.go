package mcptools

import (
	"context"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// noticedAuth is a Server.OAuth that notes, in the exchange of the
// request's context, why an authorization failed: the SDK words it as a
// rejection by the transport.
type noticedAuth struct {
	auth.OAuthHandler
}

// Authorize asks the handler for a new token, for the refused req.
func (a noticedAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	err := a.OAuthHandler.Authorize(ctx, req, resp)
	if err != nil {
		why := redactBearer(err.Error(), req.Header.Get("Authorization"))
		ex, _ := ctx.Value(exchangeKey{}).(*exchange)
		ex.note(func(ex *exchange) { ex.refused = why })
	}
	return err
}

// redactBearer is text without the token of an Authorization header: an
// error must not carry the credential it was refused with.
func redactBearer(text, authorization string) string {
	scheme, token, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		return text
	}
	return strings.ReplaceAll(text, strings.TrimSpace(token), "[redacted]")
}
