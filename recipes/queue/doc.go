// Package queue provides distributed queues on ZooKeeper, written only
// against [zksim.Conn]: a FIFO queue, ZooKeeper's own DistributedQueue
// recipe ([Queue]), a priority queue ([PriorityQueue], as
// Curator's DistributedPriorityQueue) and a locking queue ([LockingQueue])
// whose items survive a consumer that dies before acknowledging them.
//
// Consumers take items with Take, which waits for one, or TryTake, which
// does not and returns [ErrEmpty] when there is none (Java's poll and
// remove in one Go call); Peek reads the head without taking it (ErrEmpty
// too: Java's peek and element).
//
// TryTake, Peek and Len sync before they list the queue, so that on an
// ensemble they see every Offer that returned before they began, on any
// client (a member serving a read may lag behind the quorum: ZooKeeper's
// reads are sequentially consistent, only a read after a sync is up to
// date). A TryTake reports ErrEmpty only for a queue that had no unclaimed
// item at some time during the call. The Take of a Queue or LockingQueue
// does not sync: its watch fires once its member applies an item it did
// not list, and the head of a FIFO queue is its oldest item, which a
// lagging member lists too. A PriorityQueue's Take syncs once first, so
// that it hands out the head of every item offered before it began, not a
// lower-priority one its member had applied. The reads that
// decide a call's outcome sync too: after a lost reply the client may
// have moved to a member that has not applied its own change (it never
// saw the change's zxid), so the receipt read that tells an Offer or a
// remove whether its multi was applied, and the look at a LockingQueue
// claim (Ack after a lost reply, Release, a claim's cleanup), follow a
// sync. Release thus reports a claim deleted before it began as lost.
//
// # Znode layout
//
//	<dir>/_c_<guid>-qn-<seq>            a Queue item (persistent sequential)
//	<dir>/_c_<guid>-p<prio>-qn-<seq>    a PriorityQueue item; <prio> is the
//	                                    priority as 8 hex digits, biased so
//	                                    that text order is numeric order
//	<dir>/_r_<guid>                     the receipt of one Queue value
//	                                    (ephemeral, one per value that has
//	                                    offered or removed, while its
//	                                    session lives)
//	<dir>/items/_c_<guid>-qn-<seq>      a LockingQueue item
//	<dir>/items/_r_<guid>               a LockingQueue value's receipt
//	<dir>/claims/<item name>            the claim of the consumer working on
//	                                    that item (ephemeral)
//
// The directory is created (persistent, with its missing ancestors) on
// first use. Items are ordered by sequence number (serial-number order,
// correct across the int32 wrap: see package recipes), after priority for
// a PriorityQueue, never by the random GUID. A Queue and a PriorityQueue
// may share a directory: a PriorityQueue takes a Queue's item (no <prio>
// in its name) as of priority 0, and a Queue takes every item by sequence
// number alone.
//
// # Exactly once, even when replies are lost
//
// A lost reply ([zksim.ErrConnectionLoss]) leaves a producer or consumer
// not knowing whether its change was made. Searching for the item's GUID
// afterwards is not enough for a queue: a fast consumer may already have
// taken the item. So every Offer and every remove is one multi that also
// writes the item's identity into the caller's receipt node, a node only
// that Queue value writes; after a lost reply it reads its receipt to learn
// whether the multi was applied. Each item offered is thus added once and
// returned by exactly one TryTake or Take, as long as the sessions
// live: an item whose remove was applied just as the consumer's session
// expired is lost with it (the remove happened, the reply did not arrive).
// A LockingQueue goes further: an item is deleted only when its consumer
// acknowledges it, so a consumer that dies (its session expires or it
// closes its Conn) before Ack gives the item back for another consumer.
//
// # Connection states
//
// Queue operations wait out connection losses and retry. An operation
// fails with an error matching zksim.ErrSessionExpired once the session has
// expired (make a new Conn), and with ctx.Err() when ctx is done; a call
// that fails returns no data (the item of a Take or TryTake that failed
// after its remove may have been applied is lost, as said above). A call
// that must create a missing directory (the queue's, or a LockingQueue's
// items or claims directory) which the server refuses to create (the ACL
// of its parent denies create) fails with the server's error,
// zksim.ErrNoAuth: it neither retries the refusal nor takes the missing
// directory for an empty queue. A LockingQueue claim is ephemeral: while
// the consumer is disconnected the claim is doubtful, and once its session
// expires the item is someone else's; Ack then fails with ErrClaimLost.
//
// # Known limit: claims deleted by hand
//
// An Ack whose reply was lost looks at its claim and its item to learn
// whether its multi was applied: both gone means it was. That holds while
// only the recipe deletes claims. If a third party (an operator, a cleanup
// job) deletes a live claim while the Ack's reply is lost, and another
// consumer claims and acknowledges the item before the first Ack looks,
// both Acks return nil: the item is reported delivered twice. Telling the
// two apart would take an acknowledgement record in the Ack's multi, as
// the receipts do for removes; the recipe does not keep one. Likewise a
// Release whose delete's reply was lost takes its claim, found gone, for
// deleted by that delete, though a third party may have deleted it first.
package queue
