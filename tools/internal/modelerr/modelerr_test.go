package modelerr

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestErrorf: the text is the model's, the wrapped error the caller's.
func TestErrorf(t *testing.T) {
	err := Errorf(context.DeadlineExceeded, "the call to %q timed out", "x")
	assert.EqualError(t, err, `the call to "x" timed out`)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	var pathErr *fs.PathError
	err = Errorf(&fs.PathError{Op: "exec", Path: "x", Err: fs.ErrNotExist}, "the program %q was not found", "x")
	assert.EqualError(t, err, `the program "x" was not found`)
	assert.True(t, errors.As(err, &pathErr))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}
