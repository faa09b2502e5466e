// Package retry is how the recipes live through connection loss: wait until
// a Conn is connected again, retry an idempotent call across connection
// losses, and run the cleanup that follows a cancelled call for as long as
// the session may be alive.
package retry
