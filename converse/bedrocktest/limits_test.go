package bedrocktest

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

func TestMaxRequestBytes(t *testing.T) {
	srv := NewServer(Script(Text("small enough")), WithMaxRequestBytes(1<<10))
	defer srv.Close()
	client := srv.Client()
	ctx := context.Background()

	_, err := client.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String(testModel), Messages: []types.Message{userText(strings.Repeat("x", 1<<20))},
	})
	var ve *types.ValidationException
	must.ErrorAs(t, err, &ve)
	expect.Equal(t, "Input is too long for requested model.", ve.ErrorMessage())
	must.Len(t, srv.Requests(), 1) // not retried
	expect.Equal(t, []byte(nil), srv.Requests()[0].Body)

	// A request within the limit goes to the handler.
	_, err = client.Converse(ctx, converseInput())
	expect.NoError(t, err)
}

func TestMaxRequests(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		sent int
		want []string // the texts of the requests kept
	}{
		{"last n", []Option{WithMaxRequests(2)}, 3, []string{"2", "3"}},
		{"none", []Option{WithMaxRequests(0)}, 2, nil},
		{"all", []Option{WithMaxRequests(-1)}, 3, []string{"1", "2", "3"}},
		{"default", nil, 3, []string{"1", "2", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(HandlerFunc(func(ctx context.Context, req *Request) (*Reply, error) {
				return Text("ok"), nil
			}), tt.opts...)
			defer srv.Close()
			client := srv.Client()
			for i := range tt.sent {
				_, err := client.Converse(context.Background(), &bedrockruntime.ConverseInput{
					ModelId: aws.String(testModel), Messages: []types.Message{userText(string(rune('1' + i)))},
				})
				must.NoError(t, err)
			}
			var got []string
			for _, r := range srv.Requests() {
				got = append(got, r.Messages[0].Content[0].(*types.ContentBlockMemberText).Value)
			}
			expect.Equal(t, tt.want, got)
		})
	}
}
