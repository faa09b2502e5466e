// Package zkmem is an in-process ZooKeeper: a znode tree, sessions,
// ephemeral and sequential nodes, one-shot and persistent watches, multi,
// ACLs, containers and TTL nodes, reproducing the behaviour of a ZooKeeper 3.8
// server down to sequence numbers, Stat fields, zxids and error codes.
//
// A [Server] holds the state; [Server.Connect] opens a session and returns a
// [*Conn], which implements [zksim.Conn] and the optional capabilities
// [zksim.PersistentWatcher], [zksim.EphemeralsLister] and
// [zksim.ChildCounter]. The Conn behaves as a ZooKeeper client library would:
// it validates paths before sending, fans a watch event out to every channel
// registered for it, and re-registers watches when it reconnects.
//
// # Test controls
//
// The concrete types carry the controls a test needs to put coordination code
// under the faults it meets in production:
//
//   - [Conn.Disconnect] and [Conn.Reconnect]: the connection drops while the
//     session lives on; watches come back by the server's setWatches rules;
//   - [Conn.LoseNextReply], [Conn.DropNextRequest] and [Conn.SetFaultHook]:
//     a request is applied but its reply is lost, or it never reaches the
//     server; either way the caller gets [zksim.ErrConnectionLoss];
//   - [Conn.Expire] and [Server.ExpireSession]: the server expires a session;
//   - [Server.Close]: the server goes away.
//
// # Determinism
//
// Nothing observable depends on Go map iteration order or goroutine timing:
// watchers, a session's ephemerals and the firing order of watch events are
// kept in ordered structures, and children in the same hash table a
// ZooKeeper 3.8.0 server keeps them in (a Java HashSet, modelled exactly), so
// a listing of children comes in the server's order for the same history of
// creates and deletes: neither sorted nor in creation order (see
// Options.SortedChildren). The entries an "auth" ACL expands to come in the
// server's order too. Time comes from the time package and
// waiting is done on channels, so inside a testing/synctest bubble every
// timer (session expiry, container and TTL reaping) runs on virtual time.
//
// # Where zkmem differs from a real server
//
// A request larger than
// Options.MaxRequestBytes drops the connection as a real server does, but the
// size is computed from the request's encoded form rather than read off a
// socket.
package zkmem
