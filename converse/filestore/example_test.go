package filestore_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tooluse/bedrock/converse"
	"github.com/tooluse/bedrock/converse/bedrocktest"
	"github.com/tooluse/bedrock/converse/filestore"
)

// A conversation saved in a directory goes on in a conversation restored
// from it, as it would in another process.
func Example() {
	dir, err := os.MkdirTemp("", "sessions")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	srv := bedrocktest.NewServer(bedrocktest.Script(bedrocktest.Text("Hello!"), bedrocktest.Text("You said hi.")))
	defer srv.Close()
	const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	session := func(o *converse.Options) {
		o.Session = &converse.Session{Store: filestore.Store{Dir: dir}, ID: "alice"}
	}

	c := converse.New(srv.Client(), model, nil, session)
	if _, err := c.Send(context.Background(), "hi"); err != nil {
		panic(err)
	}

	st, err := filestore.Store{Dir: dir}.Load(context.Background(), "alice")
	if err != nil {
		panic(err)
	}
	restored, err := converse.Restore(srv.Client(), nil, st, session)
	if err != nil {
		panic(err)
	}
	res, err := restored.Send(context.Background(), "what did I say?")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	fmt.Println(len(restored.History()), "messages, revision", restored.State().Revision)
	// Output:
	// You said hi.
	// 4 messages, revision 4
}
