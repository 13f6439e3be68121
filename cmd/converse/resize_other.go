//go:build !unix

package main

// onResize does nothing: there is no SIGWINCH here, and the size read at
// the start stays.
func onResize(fn func()) (stop func()) { return func() {} }
