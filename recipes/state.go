package recipes

import "fmt"

// HoldState is what the holder of a lock, a semaphore lease or a leadership
// knows about its hold, given its connection and session state.
type HoldState int

const (
	// NotHeld: no hold taken yet (the zero value).
	NotHeld HoldState = iota
	// Held: connected, and the hold's node exists and is owned by our
	// session.
	Held
	// Doubtful: the connection is lost but the session may live on
	// (Curator's SUSPENDED). Another client may already hold; act as if you
	// did not until the state is Held again or becomes Lost.
	Doubtful
	// Lost: certainly gone (Curator's LOST): the session expired, or the
	// connection stayed down for the whole session timeout, or the node was
	// deleted, or the Conn was closed, or its client failed to
	// authenticate (StateAuthFailed). Lost is final.
	Lost
	// Released: given up by the holder (Unlock, Release, Resign). Final.
	Released
)

func (s HoldState) String() string {
	switch s {
	case NotHeld:
		return "NotHeld"
	case Held:
		return "Held"
	case Doubtful:
		return "Doubtful"
	case Lost:
		return "Lost"
	case Released:
		return "Released"
	}
	return fmt.Sprintf("HoldState(%d)", int(s))
}

// Final reports whether the hold has ended (Lost or Released).
func (s HoldState) Final() bool { return s == Lost || s == Released }
