//go:build !linux

package parentdeath

import "os/exec"

func startDying(_ *exec.Cmd, start func() error) (func(), error) {
	if err := start(); err != nil {
		return nil, err
	}
	return func() {}, nil
}
