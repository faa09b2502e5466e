package zkserver

import "syscall"

// processAttributes puts the JVM in its own process group, so that stopping
// it kills every process it started, and asks the kernel to SIGKILL it if the
// thread that started it dies (the test binary exited without a cleanup).
func processAttributes() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
