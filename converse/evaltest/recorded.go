package evaltest

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/tooluse/bedrock/converse/recording"
)

// Recorded returns a client for a judge or a simulated user whose model
// calls are recorded the first time and replayed after. When the file at
// path exists and update is false, its calls are answered from it,
// offline. Each request must then match the recorded one. Otherwise the
// calls go through live (called only then), and are recorded. finish saves
// the recording, or reports recorded calls that were never made.
func Recorded(path string, update bool, live func() (*bedrockruntime.Client, error)) (client *bedrockruntime.Client, finish func() error, err error) {
	if !update {
		rec, err := recording.Load(path)
		switch {
		case err == nil:
			r := recording.NewReplayer(rec)
			return r.Client(), r.Unused, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("evaltest: %w", err)
		}
	}
	c, err := live()
	if err != nil {
		return nil, nil, fmt.Errorf("evaltest: recording %s: %w", path, err)
	}
	rec := recording.NewRecorder(c.Options().HTTPClient)
	client = bedrockruntime.New(c.Options(), func(o *bedrockruntime.Options) { o.HTTPClient = rec })
	finish = func() error {
		if err := rec.Save(path); err != nil {
			return fmt.Errorf("evaltest: %w", err)
		}
		return nil
	}
	return client, finish, nil
}
