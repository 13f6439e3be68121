package converse

import "errors"

// ErrStopped means the user or a limit ended the task: its open calls are
// answered as stopped, and the next Send sends its prompt at once.
var ErrStopped = errors.New("the task was stopped")
