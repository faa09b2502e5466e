// Package recipes is the home of zksim's coordination recipes: the
// algorithms of ZooKeeper's "Recipes and Solutions" and of Apache Curator,
// written only against [zksim.Conn], so the same code runs on zkmem, under
// the simulator and on a real ZooKeeper.
//
// The recipes live in one package per family:
//
//   - recipes/election: leader election (predecessor watches), plus a herd
//     variant and a single-node variant kept for comparison and benchmarks;
//   - recipes/lock: an exclusive lock, a read-write lock and a counting
//     semaphore;
//   - recipes/queue: a FIFO queue, a priority queue and a locking queue
//     whose items survive a consumer that dies before acknowledging;
//   - recipes/barrier: a barrier, a double barrier and the start barrier
//     of a fixed-size group.
//
// This package holds what they share: [HoldState], the vocabulary a lock
// holder or a leader uses to learn what its connection state means for it;
// and the protected create the locks and elections use,
// [CreateProtectedEphemeralSequential] (go-zookeeper's call of that name,
// safe against lost replies and cleaning up after itself), with
// [SequenceOf] and [CompareSequence] to order the nodes it makes, for
// users who build recipes of their own.
//
// # For users of etcd's concurrency package and go-zookeeper
//
//   - lock.Mutex is etcd's Mutex (Lock, TryLock, Unlock with a context);
//     lock.NewLocker is etcd's NewLocker (a sync.Locker that panics when
//     it cannot lock); lock.RWMutex has the methods of sync.RWMutex
//     (RLock, RUnlock, Lock, Unlock), each with a context;
//   - election.Election is etcd's Election (Campaign, Proclaim, Resign,
//     Leader, Observe); its Resume is etcd's ResumeElection;
//   - the Guard of a Mutex, a semaphore Lease or an Election is etcd's
//     IsOwner: a [zksim.CheckOp] for a guarded Multi, next to the fencing
//     Token;
//   - queues take with Take (waits) or TryTake (returns queue.ErrEmpty) and
//     read the head with Peek;
//   - constructors whose arguments can be wrong (a semaphore's or a
//     barrier's size) return an error matching zksim.ErrBadArguments
//     rather than panic.
//
// # Conventions every recipe follows
//
// Blocking calls take a context first and block until they succeed, fail, or
// the context is done. A call that gives up (context done, session expired)
// deletes the znodes it created, so an abandoned attempt leaves no orphan
// behind. That cleanup outlives the context: it waits out connection
// losses for as long as the session may be alive, and stops only when the
// nodes are gone or the session is known to have ended (the client heard
// it expired, or the Conn was closed). It never presumes an expiry from
// how long the connection has been down: on a ZooKeeper ensemble no
// session expires while there is no leader, and a new leader gives every
// session a fresh timeout, so a client may come back to its session after
// any outage. So a call can return long after its context is done (close
// the Conn to end it at once: the session's ephemeral nodes go with it). A client that failed to
// authenticate (zksim.StateAuthFailed, as ZooKeeper's Java client after a
// rejected credential) can do nothing more: a call returns
// zksim.ErrAuthFailed, a cleanup stops (the server deletes the session's
// ephemeral nodes when it expires it) and a hold becomes Lost. Errors are sentinels matched with [errors.Is]; ZooKeeper errors
// come through wrapped, so errors.Is(err, zksim.ErrSessionExpired) works.
//
// Contender nodes (locks, leases, election candidates) are sequential and
// "protected": their names take Curator's protected form
// _c_<guid>-<name><sequence>, for example
// _c_6f1b2c3d-2a4b-4c5d-8e9f-0123456789ab-lock-0000000042. When a create's
// reply is lost ([zksim.ErrConnectionLoss]) the recipe lists the parent for
// its GUID and adopts the node it finds instead of creating a second one,
// which would be orphaned inside a live session and deadlock every waiter.
// Queue items carry protected names too, but a consumer may take an item
// before its producer looks for it, so queues settle a lost reply with a
// receipt node written in the same multi (see package queue).
//
// The names after the GUID are zksim's own, except an exclusive lock's
// (lock-, as Curator's InterProcessMutex), and so is the order below: by
// default the recipes do not take part with Curator's or kazoo's recipes
// of the same kind. The lock and election packages' WithLayout options
// make a recipe name and order its nodes as Curator 5.4 or kazoo 2.8 does
// (their package docs list the pairs), so that Go, Java and Python
// processes share one lock or election; a recipe that meets another
// library's nodes it cannot order returns an error matching
// [ErrForeignNodes] instead of ignoring them.
//
// Contenders are ordered by their sequence number only, never by the whole
// name (the GUID prefix is random). The sequence is the parent's int32 child
// counter, so after 2147483647 it wraps to -2147483648. The recipes compare
// sequence numbers as serial numbers (RFC 1982 arithmetic on 32 bits): a is
// before b when int32(b-a) > 0. This keeps creation order across the wrap
// as long as the oldest and newest nodes present at the same time were
// created fewer than 2^31 creations apart, which holds for any real lock,
// election or queue directory. (The Curator and kazoo layouts compare the
// sequence as text instead, as those libraries do; see package lock.)
//
// Waiters watch only the node just before them (predecessor watches), so a
// release wakes one client, not all of them. Variants that watch every
// child (the "herd effect") exist only to be benchmarked against and say so.
//
// Ownership is checked with the session: a recipe believes it holds a node
// only after reading its Stat and finding EphemeralOwner equal to
// [zksim.Conn.SessionID].
//
// A call belongs to the session it began on. Some client libraries replace
// an expired session with a new one and go on (Curator's does; sim.Renewing
// models it): the Conn is connected again, with another SessionID, and the
// old session's ephemeral nodes and watches are gone. A call does not go on
// with the new session: it fails with an error matching
// zksim.ErrSessionExpired, as it would on a Conn that stays expired. A
// request or a watch of the old session ends with that error; a call that
// is waiting out a connection loss checks the SessionID when the
// connection is back; a cleanup that meets the expiry ends its call too;
// and what a session claimed stays bound to it (a locking-queue Item
// begun on one session is not acknowledged or released on another).
// (Not covered: a client that renews while the call is between two
// requests, not waiting for either.) A process that goes on with the new
// session starts over as a new member, contender or holder.
//
// # Connection states and what they mean for a holder
//
// The recipes follow Curator's connection-state conventions:
//
//   - connected: the hold is valid ([Held]);
//   - SUSPENDED, the connection is lost but the session may live on: the
//     hold is doubtful ([Doubtful]); another client may already hold, so
//     the holder must stop acting as holder until it is Held again;
//   - LOST, the session expired, or the connection stayed down for the
//     whole session timeout, or the node was deleted, or the Conn was
//     closed: the hold is certainly gone ([Lost]), for good. After a long
//     disconnection its node may remain while the session lives on (on an
//     ensemble none expires while there is no leader): release the hold
//     (or take it again with the same object) to delete it.
//
// Even a holder that reacts to these states can act late (a process pause
// outlasts its session without the process noticing). Only a fencing token
// checked by the protected resource makes that safe: lock and election
// holders expose the czxid of their node, which grows with every lock
// granted in the ensemble.
package recipes
