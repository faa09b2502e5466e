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
// By default (the Zksim layout) a lock directory holds one
// ephemeral-sequential node per contender, with Curator's protected names
// (_c_<guid>-<name><seq>) but not all of Curator's names and not its
// order:
//
//	<dir>/_c_<guid>-lock-<seq>     exclusive lock (Mutex)
//	<dir>/_c_<guid>-read-<seq>     read half of an RWMutex
//	<dir>/_c_<guid>-write-<seq>    write half of an RWMutex
//	<dir>/locks/_c_<guid>-lock-<seq>    a Semaphore's internal lock
//	<dir>/leases/_c_<guid>-lease-<seq>  a Semaphore's leases
//
// The read-write lock is not Curator's InterProcessReadWriteLock, whose
// nodes are named __READ__ and __WRIT__: each would ignore the other's
// nodes and both could hold the write lock at once. To share a directory
// with Curator's or kazoo's locks, use [WithLayout] (see "Sharing a lock
// with Curator and kazoo" below).
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
// # Sharing a lock with Curator and kazoo
//
// Go, Java and Python processes can share one lock when every one of them
// names and orders the nodes of the directory alike. [WithLayout] makes a
// recipe follow another library's layout:
//
//	WithLayout(Curator)   Curator 5.4's recipes, on the same directory:
//	  Mutex      InterProcessMutex (and LeaderSelector): _c_<guid>-lock-<seq>
//	  RWMutex    InterProcessReadWriteLock: _c_<guid>-__READ__<seq>, _c_<guid>-__WRIT__<seq>
//	  Semaphore  InterProcessSemaphoreV2: <dir>/locks and <dir>/leases, every child of leases counted
//	WithLayout(Kazoo)     kazoo 2.8's recipes, on the same path:
//	  Mutex      Lock (and Election): <guid>__lock__<seq>, guid 32 hex digits
//	  RWMutex    ReadLock and WriteLock: <guid>__rlock__<seq>, <guid>__lock__<seq>
//	  Semaphore  Semaphore: leases <dir>/<guid> (not sequential), internal lock <dir>-__lock__,
//	             the number of leases as <dir>'s data (a different number is refused)
//
// Each layout also takes that library's order. Curator sorts every child
// of the directory by the text after the last occurrence of the lock's
// name (the whole name when it has none) and compares those as strings;
// kazoo sorts the children that end in its names and a sequence by the
// text of the sequence. Below 2^31 creations in the directory the text
// order is the creation order. After the int32 wrap it is not: the
// sequence -2147483648, created after 2147483647, sorts before it as
// text. A recipe in the Curator or kazoo layout sorts as those libraries
// do, so all agree on who holds; but a contender created just after the
// wrap sorts before the holder and takes the lock at once, in all three
// libraries alike. (The Zksim layout compares serial numbers and keeps
// the creation order across the wrap, but then disagrees with Curator and
// kazoo there.) kazoo's expression misses the sequences -999999999 to -1
// altogether; our kazoo layout still counts them.
//
// What cannot be made safe is refused: a lock whose directory holds
// contender nodes of a layout it cannot order (for the Zksim layout,
// kazoo's nodes and protected nodes named as Curator names its own, lock-,
// latch-, __READ__ or __WRIT__, other than the recipe's own names, so a
// default RWMutex also refuses a Mutex's directory; for the Curator
// layout, kazoo's nodes and zksim's own read-, write- and n_ nodes; for
// the Kazoo layout, any _c_<guid>- node) returns an error matching
// [recipes.ErrForeignNodes] from Lock, TryLock, RLock or TryRLock, having
// deleted its node. Curator's and kazoo's recipes of one kind cannot
// share a directory with each other, whatever we do: Curator sorts
// kazoo's names after its own, and kazoo ignores Curator's (unless its
// Lock is given extra_lock_patterns), so both can hold at once; and
// kazoo's Semaphore keeps its leases where Curator's does not look. A
// Semaphore refuses only what it lists anyway: in the Curator layout a
// kazoo lease in the directory, in the kazoo layout Curator's locks and
// leases directories; the Zksim layout does not list the directory and
// cannot see kazoo's leases.
//
// kazoo 2.8's ReadLock waits for every writer in the directory, even one
// that came after it, which itself waits for the reader: the two wait
// until the reader's timeout. That is kazoo's, and it keeps exclusion.
// Our read lock in the kazoo layout waits only for writers ahead of it.
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
//     closed (Curator's LOST). Someone else may hold the lock. Final. A
//     hold Lost to a long disconnection may leave its node behind: the
//     session may live on (on an ensemble none expires while there is no
//     leader), and the node with it, blocking the others. Unlock (or Lock
//     again) deletes it; release a Lost lease of a Semaphore.
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
// node is deleted, or the session is known to have ended (the client heard
// it expired, or the Conn was closed), however long the connection stays
// down meanwhile: only the server expires a session, and on an ensemble
// none expires while there is no leader (see package recipes).
package lock
