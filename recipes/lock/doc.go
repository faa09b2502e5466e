// Package lock provides distributed locks on ZooKeeper, written only
// against [zksim.Conn]: an exclusive lock ([Mutex]), a read-write lock
// ([RWMutex], ZooKeeper's shared-locks recipe, with the methods of
// [sync.RWMutex]: RLock, RUnlock, Lock, Unlock, each with a context) and a
// counting semaphore ([Semaphore], Curator's InterProcessSemaphoreV2).
// [NewLocker] adapts a Mutex to [sync.Locker], as etcd's NewLocker does,
// for code that cannot pass a context or handle an error.
//
// # Znode layout
//
// A lock directory holds one ephemeral-sequential node per contender, named
// as Curator names them:
//
//	<dir>/_c_<guid>-lock-<seq>     exclusive lock (Mutex)
//	<dir>/_c_<guid>-read-<seq>     read half of an RWMutex
//	<dir>/_c_<guid>-write-<seq>    write half of an RWMutex
//	<dir>/locks/_c_<guid>-lock-<seq>    a Semaphore's internal lock
//	<dir>/leases/_c_<guid>-lease-<seq>  a Semaphore's leases
//
// The directory is created (persistent, with its missing ancestors) on
// first use and never deleted. The holder of an exclusive lock is the node
// with the lowest sequence number; every waiter watches only the node just
// before it, so a release wakes exactly one waiter. Sequence numbers are
// compared as serial numbers, which keeps the order across the int32 wrap
// (see package recipes). The GUID lets a contender whose create reply was
// lost find its node again instead of leaving an orphan that would block
// everyone behind it.
//
// # Connection states for a holder
//
// A holder learns what its connection means for its hold through State,
// Watch and Done ([recipes.HoldState]):
//
//   - Held: connected and the lock node is ours (its EphemeralOwner is our
//     session id);
//   - Doubtful: the connection is lost (Curator's SUSPENDED). The session,
//     and so the lock, may still be ours, but another client may hold it by
//     now: stop touching the protected resource until Held again;
//   - Lost: the session expired, or the connection stayed down for the
//     whole session timeout, or the lock node was deleted, or the Conn was
//     closed (Curator's LOST). Someone else may hold the lock. Final.
//   - Released: Unlock was called. Final.
//
// A holder can be paused past its session expiry without noticing, so a
// resource that must never see two holders at once should check the
// fencing token: [Mutex.Token] is the czxid of the lock node, which grows
// with every lock granted anywhere in the ensemble. The resource refuses a
// request carrying a token lower than one it has already seen.
//
// When the resource is itself in ZooKeeper, [Mutex.Guard] (and
// [Lease.Guard]) does the same job without the resource's help, as etcd's
// IsOwner: it is a [zksim.CheckOp] on the lock node, and a Multi that
// starts with it is applied only while the node exists, that is while the
// hold lasts as the server sees it.
//
// # Cancellation
//
// Lock, TryLock and Acquire delete the node they created on every error
// return, including a done ctx and a create whose reply was lost. The
// cleanup ignores ctx and goes on for as long as the session may be alive:
// a node left behind by a live session would block every later contender
// until the session ends. So after ctx is done these calls return once the
// node is deleted, or the session is known to have ended (expired, Conn
// closed), or the connection has been down for one and a half session
// timeouts without a break (by then the server has expired the session,
// which deletes the node anyway). A connection that flaps, or a process
// pause, can keep a cancelled call waiting longer than that.
package lock
