package agentcore_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/tooluse/bedrock/converse/agentcore"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
	"github.com/tooluse/bedrock/tools"
)

// A Handler serving a conversation, with the offline Bedrock of
// bedrocktest in place of the real one and a store in a temporary
// directory in place of the runtime's session storage.
func Example() {
	bed := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hello! How can I help?")))
	defer bed.Close()
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	reg, _ := tools.NewRegistry(tools.Builtins()...)

	h := agentcore.New(bed.Client(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", reg, func(o *agentcore.Options) {
		o.Store = filestore.Store{Dir: dir}
	})
	srv := httptest.NewServer(h) // in the container: http.ListenAndServe(":8080", h)
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/invocations", strings.NewReader(`{"prompt": "Hi!"}`))
	req.Header.Set(agentcore.SessionHeader, "0123456789abcdef0123456789abcdef-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.Status, "\n", string(body))
	// Output:
	// 200 OK
	// {"status":"success","response":"Hello! How can I help?","sessionId":"0123456789abcdef0123456789abcdef-1","stopReason":"end_turn","turns":1,"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15,"cacheReadInputTokens":0,"cacheWriteInputTokens":0},"costUSD":0.0001155}
}
