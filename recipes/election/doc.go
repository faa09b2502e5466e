// Package election provides leader election on ZooKeeper, written only
// against [zksim.Conn], in the style of etcd's concurrency.Election:
// Campaign blocks until we lead, Resign gives leadership up, Leader reads
// the current leader and Observe follows it. Resume continues a campaign
// from a candidate node our session already has (etcd's ResumeElection),
// and Guard turns leadership into a check op for a guarded Multi (etcd's
// IsOwner).
//
// [New] makes the recipe to use: ZooKeeper's leader-election recipe with
// predecessor watches. [NewHerd] and [NewSingleNode] are variants kept only
// to be compared against it in benchmarks and fault experiments; do not use
// them for real work.
//
// # Znode layout
//
//	<dir>/_c_<guid>-n_<seq>   one ephemeral-sequential node per candidate
//	                          (New and NewHerd); its data is the value the
//	                          candidate campaigned or proclaimed with
//	<path>                    the single ephemeral node of NewSingleNode
//
// The directory is created (persistent, with its missing ancestors) on
// first use. The leader is the candidate with the lowest sequence number
// (serial-number order, correct across the int32 wrap: see package
// recipes). Other children of the directory are ignored: names in which
// "n_" is not followed by a sequence number as the server writes it (an
// int32 in base 10, ten characters or more, no sign but a minus). Each other candidate watches only the candidate just before it,
// so when the leader goes exactly one candidate wakes up, the next in line.
// Before it believes it leads, a candidate reads its own node and checks
// that the node's EphemeralOwner is its session. The GUID in the name lets
// a candidate whose create reply was lost find its node again rather than
// leave an orphan that would sit in the line forever.
//
// # Sharing an election with Curator and kazoo
//
// By default a candidate node is _c_<guid>-n_<seq>, which no other
// library's election sees. [WithLayout] makes an election name and order
// its candidates as another library does, so that Go, Java and Python
// candidates elect one leader between them on one directory:
//
//	WithLayout(CuratorLatch)     Curator 5.4's LeaderLatch: _c_<guid>-latch-<seq>
//	WithLayout(CuratorSelector)  Curator 5.4's LeaderSelector (an InterProcessMutex): _c_<guid>-lock-<seq>
//	WithLayout(Kazoo)            kazoo 2.8's Election (a kazoo Lock): <guid>__lock__<seq>
//
// In the Curator layouts every child of the directory takes part, sorted
// by the text after the last occurrence of the candidate name (the whole
// name when it has none) as Java compares strings; in the kazoo layout
// the children whose name ends in __lock__ and a sequence, sorted by the
// text of the sequence. Leader and Observe report the first candidate in
// that order. After the int32 wrap the text order is not the creation
// order; all three libraries then agree on the leader, and all three let
// a candidate created just after the wrap lead at once (see package lock
// for the details, which are the same).
//
// Campaign refuses, with an error matching [recipes.ErrForeignNodes] and
// its node deleted, a directory that holds candidates of a layout it
// cannot order: for the Zksim layout kazoo's nodes and Curator's lock-,
// latch-, __READ__ and __WRIT__ nodes (a lock's directory, too); for the
// Curator layouts kazoo's and our n_ nodes; for the kazoo layout any
// _c_<guid>- node. LeaderLatch and LeaderSelector cannot share
// a directory with each other (each sorts the other's names after its
// own), nor either with kazoo's Election.
//
// # Connection states for the leader
//
// A leader learns what its connection means for its leadership through
// State, Watch and Done ([recipes.HoldState]):
//
//   - Held: connected and our node is there: we lead;
//   - Doubtful: the connection is lost (Curator's SUSPENDED). We may still
//     lead, but another candidate may already lead: stop acting as leader
//     until Held again;
//   - Lost: the session expired, or the connection stayed down for the
//     whole session timeout, or our node was deleted, or the Conn was
//     closed (Curator's LOST). Another candidate leads or soon will. Final:
//     campaign again (with a new Conn if the session expired), or Resign:
//     after a long disconnection our node may remain while the session
//     lives on (on an ensemble none expires while there is no leader),
//     and either deletes it;
//   - Released: Resign was called. Final.
//
// The leader's Token (the czxid of its node) increases with every new
// leader, so it serves as a term number and a fencing token. Its Guard is
// a [zksim.CheckOp] on its node: a Multi that starts with it is applied
// only while the node exists, that is while it leads as the server sees
// it.
package election
