// Package redact removes AWS credentials and request signatures from text
// before it is recorded or printed: error bodies that echo a canonical
// request, configuration dumps, logged headers.
package redact

import (
	"regexp"
	"sync"
)

// Marker is what replaces each secret.
const Marker = "[REDACTED]"

// A rule finds secrets with re; the submatch named "keep", if any, is put
// back before the marker, so that the text still says what was redacted.
type rule struct {
	re   *regexp.Regexp
	repl string
}

// sep is what stands between a name and its value: "name=value",
// "name: value", `"name": "value"`, `\"name\":\"value\"` (JSON inside a JSON
// string) and "<name>value".
const sep = `\s*(?:\\?["'])?\s*[:=>]\s*(?:\\?["'])?\s*`

// b64 is a run of base64 (or URL-encoded base64) characters; `\/` is a
// slash as some JSON encoders escape it.
const b64 = `(?:[A-Za-z0-9+/=%_-]|\\/)`

// keyID is an AWS access key ID: a four-letter prefix naming its kind (AKIA
// long-term, ASIA temporary, AIDA user, AROA role, ...) and 16 characters.
const keyIDPattern = `\b(?:AKIA|ASIA|AIDA|AROA|AIPA|ANPA|ANVA|AGPA|ABIA|ACCA|APKA)[A-Z0-9]{16}\b`

// rules are compiled at the first String, not when a program starts: only
// errors, recordings and recorded content are redacted.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		// The Authorization header, whatever its scheme (SigV4, a Bedrock API
		// key's Bearer): its whole value, up to the end of the line or of the
		// JSON string holding it.
		{regexp.MustCompile(`(?i)(authorization` + sep + `)[^\r\n"\\]+`), "${1}" + Marker},
		// A secret access key after its name.
		{regexp.MustCompile(`(?i)((?:aws[_-]?)?secret[_-]?(?:access[_-]?)?key` + sep + `)` + b64 + `{8,}`), "${1}" + Marker},
		// A session token after its name, as a header (x-amz-security-token:),
		// a query parameter (X-Amz-Security-Token=), a setting
		// (aws_session_token =) or a field (SessionToken).
		{regexp.MustCompile(`(?i)((?:x-amz-)?(?:security|session)[_-]?token` + sep + `)` + b64 + `{8,}`), "${1}" + Marker},
		// A session token without its name: STS tokens start with these bytes.
		{regexp.MustCompile(`\b(?:IQoJb3JpZ2lu|FwoGZXIvYXdz)` + b64 + `+`), Marker},
		// A SigV4 signature (Signature=, X-Amz-Signature=, SignatureProvided).
		{regexp.MustCompile(`(?i)((?:x-amz-)?signature(?:provided)?` + sep + `)[0-9a-f]{16,}`), "${1}" + Marker},
		// A SigV4 credential: the access key ID and the scope after it.
		{regexp.MustCompile(`(?i)((?:x-amz-)?credential` + sep + `)[^\s,;&"'\\<]+`), "${1}" + Marker},
		// An access key ID anywhere, with a secret key that follows it as in
		// "AKIA... wJalr..." or "AKIA...:wJalr...".
		{regexp.MustCompile(keyIDPattern + `([\s:,;|]+)[A-Za-z0-9/+]{40}\b`), Marker + "${1}" + Marker},
		{regexp.MustCompile(keyIDPattern), Marker},
	}
})

// String returns s with every AWS credential and signature it finds
// replaced by Marker. It finds access key IDs, secret access keys and
// session tokens, after their names in any common spelling or recognisable
// on their own. It finds SigV4 signatures and credentials, and
// Authorization header values. Names
// and punctuation are kept, so redacted JSON stays JSON.
func String(s string) string {
	for _, r := range rules() {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}
