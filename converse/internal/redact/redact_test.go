package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Secrets of the shapes AWS issues; none is real.
const (
	keyID  = "ASIAQWERTYUIOPASDFGH"
	secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	token  = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDx5Yz+abc/def=="
	sig    = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
)

func TestString(t *testing.T) {
	canonical := "POST\n/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse\n\n" +
		"content-type:application/json\nhost:bedrock-runtime.us-east-1.amazonaws.com\n" +
		"x-amz-date:20250101T120000Z\nx-amz-security-token:" + token + "\n\n" +
		"content-type;host;x-amz-date;x-amz-security-token\n" + sig
	msg := "The request signature we calculated does not match the signature you provided. " +
		"Check your AWS Secret Access Key and signing method. Consult the service documentation for details.\n\n" +
		"The Canonical String for this request should have been\n'" + canonical + "'\n\n" +
		"The String-to-Sign should have been\n'AWS4-HMAC-SHA256\n20250101T120000Z\n20250101/us-east-1/bedrock/aws4_request\n" + sig + "'\n"
	invalidSignature, _ := json.Marshal(map[string]string{"message": msg})

	tests := []struct {
		name string
		in   string
		want string // "" means in, unchanged
	}{
		{
			name: "InvalidSignatureException echoing the canonical request",
			in:   string(invalidSignature),
			want: strings.ReplaceAll(string(invalidSignature), token, Marker),
		},
		{
			name: "UnrecognizedClientException",
			in:   `{"message":"The security token included in the request is invalid."}`,
		},
		{
			name: "ExpiredTokenException",
			in:   `{"message":"The security token included in the request is expired"}`,
		},
		{
			name: "Signature expired (a date, not a signature)",
			in:   `{"message":"Signature expired: 20250101T120000Z is now earlier than 20250101T121000Z (20250101T122500Z - 15 min.)"}`,
		},
		{
			name: "Authorization header line",
			in:   "Authorization: AWS4-HMAC-SHA256 Credential=" + keyID + "/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + sig + "\nHost: x",
			want: "Authorization: " + Marker + "\nHost: x",
		},
		{
			name: "Authorization inside a JSON string",
			in:   `{"message":"header Authorization: AWS4-HMAC-SHA256 Credential=a/b, Signature=` + sig + `\nnext"}`,
			want: `{"message":"header Authorization: ` + Marker + `\nnext"}`,
		},
		{
			name: "bearer API key",
			in:   "authorization: Bearer ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl",
			want: "authorization: " + Marker,
		},
		{
			name: "presigned URL",
			in:   "https://h/x?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + keyID + "%2F20250101%2Fus-east-1%2Fbedrock%2Faws4_request&X-Amz-Security-Token=IQoJb3JpZ2luX2Vj%2Fabc%2Bdef%3D&X-Amz-Signature=" + sig + "&x=1",
			want: "https://h/x?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=" + Marker + "&X-Amz-Security-Token=" + Marker + "&X-Amz-Signature=" + Marker + "&x=1",
		},
		{
			name: "credentials file",
			in:   "[default]\naws_access_key_id = " + keyID + "\naws_secret_access_key = " + secret + "\naws_session_token = " + token + "\n",
			want: "[default]\naws_access_key_id = " + Marker + "\naws_secret_access_key = " + Marker + "\naws_session_token = " + Marker + "\n",
		},
		{
			name: "environment",
			in:   "AWS_ACCESS_KEY_ID=" + keyID + " AWS_SECRET_ACCESS_KEY=" + secret + " AWS_SESSION_TOKEN=FwoGZXIvYXdzEabc",
			want: "AWS_ACCESS_KEY_ID=" + Marker + " AWS_SECRET_ACCESS_KEY=" + Marker + " AWS_SESSION_TOKEN=" + Marker,
		},
		{
			name: "STS credentials as JSON",
			in:   `{"Credentials":{"AccessKeyId":"` + keyID + `","SecretAccessKey":"` + secret + `","SessionToken":"` + token + `","Expiration":"2025-01-01T13:00:00Z"}}`,
			want: `{"Credentials":{"AccessKeyId":"` + Marker + `","SecretAccessKey":"` + Marker + `","SessionToken":"` + Marker + `","Expiration":"2025-01-01T13:00:00Z"}}`,
		},
		{
			name: "JSON inside a JSON string, slashes escaped",
			in:   `{"message":"{\"secretAccessKey\":\"wJalr\/K7MDENG\/bPxRfiCY\",\"sessionToken\":\"abcdefgh\/ijk\"}"}`,
			want: `{"message":"{\"secretAccessKey\":\"` + Marker + `\",\"sessionToken\":\"` + Marker + `\"}"}`,
		},
		{
			name: "XML error echoing the signature",
			in:   "<AWSAccessKeyId>" + keyID + "</AWSAccessKeyId><SignatureProvided>" + sig + "</SignatureProvided>",
			want: "<AWSAccessKeyId>" + Marker + "</AWSAccessKeyId><SignatureProvided>" + Marker + "</SignatureProvided>",
		},
		{
			name: "key pair without names",
			in:   "creds " + keyID + ":" + secret + " end",
			want: "creds " + Marker + ":" + Marker + " end",
		},
		{
			name: "token without its name",
			in:   "got " + token + " back",
			want: "got " + Marker + " back",
		},
		{
			name: "ordinary model text",
			in:   `{"output":{"message":{"role":"assistant","content":[{"text":"The credentials are fine; your signature is on page 2. Token count: 42."}]}}}`,
		},
		{
			name: "bedrocktest's own static key",
			in:   "Credential=AKIDBEDROCKTEST/20250101/us-east-1/bedrock/aws4_request",
			want: "Credential=" + Marker,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			got := String(tt.in)
			assert.Equal(t, want, got, "String(%q)", tt.in)
			for _, s := range []string{keyID, secret, token, sig} {
				if !strings.Contains(want, s) {
					assert.NotContains(t, got, s, "a secret left in")
				}
			}
			if json.Valid([]byte(tt.in)) {
				assert.True(t, json.Valid([]byte(got)), "redacting JSON made it invalid: %s", got)
			}
		})
	}
}
