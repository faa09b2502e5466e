//go:build unix && !linux

package zkserver

import "syscall"

// processAttributes puts the JVM in its own process group, so that stopping
// it kills every process it started.
func processAttributes() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
