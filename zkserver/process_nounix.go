//go:build !unix

package zkserver

import (
	"fmt"
	"os"
	"runtime"
)

type process struct {
	exited  chan struct{}
	waitErr error
}

func startProcess(string, []string, string, *os.File) (*process, error) {
	return nil, fmt.Errorf("%w: zkserver runs ZooKeeper only on Unix systems, not %s", errNotInstalled, runtime.GOOS)
}

func (p *process) kill() {}
