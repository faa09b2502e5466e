// Package barrier provides distributed barriers on ZooKeeper, written only
// against [zksim.Conn]: a [Barrier] that some client sets and removes while
// others wait on it, a [DoubleBarrier] whose members enter and leave
// together (ZooKeeper's double-barrier recipe, as Curator's
// DistributedDoubleBarrier), and a [StartBarrier] that lets a fixed-size
// group start together. The constructors of the group barriers check their
// arguments and return an error matching zksim.ErrBadArguments for a size
// below 1 or an invalid directory path.
//
// # Znode layout
//
//	<path>               Barrier: set while the node exists (persistent)
//	<dir>/<guid>         DoubleBarrier or StartBarrier member (ephemeral)
//	<dir>/ready          DoubleBarrier: created (persistent) by the member
//	                     that completes the group; written to by a member
//	                     that joins the open group late; deleted (at the
//	                     version seen before listing the members) by the
//	                     last member to leave, with its own node, in one
//	                     multi
//	<dir>/start          StartBarrier: created (persistent) by the member
//	                     that completes the group; it stays, so later
//	                     arrivals pass at once
//
// Missing parents are created (persistent) on first use. Member nodes are
// named by a random GUID, so a member whose create reply was lost finds
// its node again (by name and owner) instead of counting twice.
//
// # Connection states
//
// Every call waits out connection losses and retries. A wait that was cut
// by a connection loss does not miss the barrier opening: watches survive
// reconnection (the server re-arms them or fires them at once). A member
// whose session expires is no longer a member (its node is gone) and its
// calls fail with an error matching zksim.ErrSessionExpired, also on a Conn
// that goes on with a new session (see package recipes). A member that
// dies before the group is complete does not count towards it; a member
// that dies while others leave lets them go on without it. A process that
// goes on with a new session is a new member (see [DoubleBarrier] for what
// a double barrier guarantees across rounds and expiry).
package barrier
