package zkwire

import "time"

// SetControlTimeouts sets the read-header and idle timeouts of the control
// endpoints ServeControl starts from now on, until restore.
func SetControlTimeouts(header, idle time.Duration) (restore func()) {
	h, i := controlReadHeaderTimeout, controlIdleTimeout
	controlReadHeaderTimeout, controlIdleTimeout = header, idle
	return func() { controlReadHeaderTimeout, controlIdleTimeout = h, i }
}
