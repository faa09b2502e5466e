// Package history records what clients did on a ZooKeeper service and
// checks it against ZooKeeper's consistency guarantees: writes are
// linearizable, and each client's reads are sequentially consistent (a
// client sees a prefix of the one write order that never shrinks,
// includes its own acknowledged writes, and after a sync includes every
// write acknowledged before the sync). A read served by a lagging follower
// may be stale; it may never be older than what its client already saw.
//
// # Recording
//
// A [Recorder] records operations with the client that called them, their
// arguments, their result (data, Stat, error) and the times of call and
// return. Wrap each client's zksim.Conn with [Recorder.Conn], or record by
// hand with [Recorder.Invoke] and [Recorder.Return]. Times come from a
// [Clock]: by default the recorder counts its own events; under the
// simulator, an [ApplyClock] counted from sim.Config.OnApply makes the
// history a function of the seed.
//
// # Checking
//
// [Check] takes the recorded operations and returns nil, an [*Error]
// listing each [Violation] (the rule, the client, the operations involved
// and why), or an error when the history holds a call it has no model
// for. Writes are checked with github.com/anishathalye/porcupine, one
// partition per path, against a model of one znode (exists, data,
// version); a write whose outcome is unknown (connection loss, a context
// that ended) may take effect after its call or never, but, as ZooKeeper
// applies a session's writes in the order they were sent, not after a
// later write of its session returned; nor after a read that shows it.
// A call its session refused once the client knew the session had ended
// (expired or closed) took no effect. Reads
// are then placed with the zxids their Stats carry: a read of version v
// of a node is older than zxid z when the version after v, or the node's
// next incarnation, has a zxid at or below z; a client that had seen z
// must not read it. A client's own write, or any write acknowledged
// before its sync, raises what it must see; a create it saw acknowledged
// must not be found missing unless some delete could have come between.
//
// [VisualizeWrites] draws the writes on a timeline (porcupine's HTML
// visualization), with the longest linearization found for each path.
//
// Give every write unique data (the [Workload] does): a read's data then
// names the write it shows, which gives that write's zxid and proves that
// a write of unknown outcome happened.
//
// # Workloads
//
// [Workload] is a seeded random workload on a few children of one
// directory: creates, conditional and unconditional sets and deletes,
// gets, exists, children and syncs, from any number of clients.
// [Workload.Run] runs it on Conns connected however the caller likes (a
// standalone server, each member of an ensemble, the simulator's
// clients); [Workload.Client] is one client's body, for the simulator's
// World.Go. [Workload.Behind] tells the workload which clients' servers
// lag, so that they sync and read where a sync has work to do.
//
//	rec := history.NewRecorder(nil)
//	wl := history.Workload{Root: "/h", Paths: 3, Ops: 50, Seed: 1}
//	if err := wl.Run(ctx, rec, conns); err != nil { ... }
//	if err := history.Check(rec.History()); err != nil { ... }
//
// # What is not checked
//
// Multi, TTL, ephemeral and sequential creates are recorded as
// Unsupported and make Check refuse the history; ACLs and watches are not
// recorded. Every path is taken to be absent when the history starts.
// Child lists are checked for the paths the history writes: one missing
// after the client saw it exist, with no delete that could come between,
// is a violation.
package history
