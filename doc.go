// Package zksim defines the ZooKeeper client interface shared by every zksim
// backend, and the types that travel across it.
//
// The same [Conn] is implemented by:
//
//   - zkmem: a pure-Go, in-process ZooKeeper for unit tests, faithful to a
//     real ZooKeeper 3.8 down to sequence numbers, Stat fields and error codes;
//   - the adapter over github.com/go-zookeeper/zk, for a real ensemble;
//   - the simulator, which turns every call into a scheduled request.
//
// Code written against [Conn] (the recipes in zksim/recipes, for instance)
// runs unchanged on all of them.
//
// # Errors
//
// Every ZooKeeper error code has one sentinel error ([ErrNoNode],
// [ErrNodeExists], ...), matched with [errors.Is]. [ErrConnectionLoss] is the
// ambiguous outcome: the connection broke after the request may have left the
// client, so the request may or may not have been applied. Code that must not
// act twice (creating a lock node, say) has to find out which, for example by
// listing the parent for a protected name.
//
// # Watches
//
// The W variants ([Conn.ExistsW], [Conn.GetW], [Conn.ChildrenW]) set a one-shot
// watch and return a channel that receives exactly one [Event] and is then
// closed. If the watch can no longer fire (the session expired, or the Conn was
// closed) the event has type [EventNotWatching] and carries the reason in
// [Event.Err]. Persistent and recursive watches are an optional capability:
// see [PersistentWatcher].
//
// # Sessions
//
// A Conn owns exactly one session. When the session expires the Conn is
// finished: every later call returns [ErrSessionExpired], and the caller makes
// a new Conn. [Conn.SessionEvents] reports connection and session state changes.
package zksim
