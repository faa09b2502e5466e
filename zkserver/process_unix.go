//go:build unix

package zkserver

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// process is a running JVM.
type process struct {
	pid     int
	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // set before exited is closed
}

// startProcess starts name with args, its stdout and stderr going to out.
//
// The command is started from a goroutine locked to its OS thread that stays
// alive until the process has been reaped: on Linux the kernel sends the
// parent-death signal when the starting thread exits, so the thread must
// outlive the process.
func startProcess(name string, args []string, dir string, out *os.File) (*process, error) {
	p := &process{exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Stdin = nil
		cmd.Stdout = out
		cmd.Stderr = out
		cmd.SysProcAttr = processAttributes()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		p.pid = cmd.Process.Pid
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// kill sends SIGKILL to the process group and waits until the process has
// been reaped.
func (p *process) kill() {
	if err := syscall.Kill(-p.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	<-p.exited
}
