// Package retry is how the recipes live through connection loss: wait until
// a Conn is connected again, retry an idempotent call across connection
// losses, and run the cleanup that follows a cancelled call for as long as
// the session may be alive. A wait never ends on another session than the
// one it began on (a client library may replace an expired session with a
// new one): it fails with zksim.ErrSessionExpired instead.
package retry
