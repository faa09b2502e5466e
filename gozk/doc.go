// Package gozk implements [zksim.Conn] over github.com/go-zookeeper/zk
// (v1.0.4), so code written against zksim runs unchanged on a real
// ZooKeeper ensemble.
//
// [Connect] opens a session and blocks until the server has granted it,
// its ctx is done, or [DefaultConnectTimeout] (30s; [WithConnectTimeout])
// has passed; its error then names the servers it tried.
// The package zksim/zkserver starts a real server for tests.
//
// # Contexts
//
// go-zookeeper's calls take no context. Every method here runs the call
// and, if ctx ends first, returns ctx.Err() at once while the call finishes
// in the background. The request may still be applied by the server,
// exactly as if its reply had been lost. A ctx that is already done sends
// nothing.
//
// A call whose ctx ends returns at once; its request may still be applied;
// calls made after it on the same Conn are sent only after it has been
// answered, so ZooKeeper's order of a session holds. A recipe that gives up
// on a create and then cleans up (lists the children, deletes its own
// node) therefore finds the node if the create was applied at all, and no
// orphan is left behind. (A create answered with a lost connection is
// ambiguous, as [zksim.ErrConnectionLoss] always is.) While an abandoned
// call is unanswered, a new call waits for it; the wait ends early when the
// new call's ctx ends (ctx.Err(), nothing sent) or when the Conn is closed
// or its session expires. It is bounded in any case: go-zookeeper fails an
// outstanding request when the connection breaks, and breaks it when the
// server stops answering. Calls made while nothing is abandoned are not
// slowed.
//
// # Errors
//
// One table maps every error go-zookeeper returns to the zksim sentinel for
// the same ZooKeeper code (match with errors.Is). go-zookeeper reports the
// codes it has no name for (runtime inconsistency, unimplemented, ...) as
// "unknown error: <code>"; they are mapped back by code. A broken
// connection while a request was outstanding, and a request queued while no
// server could be reached, are [zksim.ErrConnectionLoss]: the request may
// or may not have been applied.
//
// Every call that takes a path checks it before sending with
// [zksim.ValidatePath], the rules of ZooKeeper's PathUtils that the Java
// client (and zkmem) apply to every operation, and answers a bad path with
// [zksim.ErrBadArguments]. go-zookeeper's own check is looser (it lets
// through, for instance, emoji and other supplementary characters, and
// U+FFFF, which the server then accepts for reads and rejects for creates),
// so without this the same call could answer ErrNoNode here and
// ErrBadArguments on zkmem. One difference remains: for a sequential create
// go-zookeeper checks the path as given, where ZooKeeper checks path+"1", so
// a sequential path ending in "/." or "/.." is refused here (go-zookeeper's
// ErrInvalidPath, mapped to ErrBadArguments) although the server would take
// it. Multi sends its paths unchecked, as zkmem does: the server checks them
// op by op and reports a bad one in that op's result.
//
// A request larger than go-zookeeper's 1.5 MiB buffer is refused before it
// is sent, with [zksim.ErrMarshallingError]; one between the server's limit
// (jute.maxbuffer, about 1 MiB) and that makes the server drop the
// connection: [zksim.ErrConnectionLoss].
//
// # Null and empty data
//
// ZooKeeper keeps null data (a jute buffer of length -1) apart from empty
// data (length 0), and so does go-zookeeper v1.0.4 in both directions: it
// sends a nil slice as -1 and an empty non-nil one as 0 (create, setData and
// their multi ops), and reads -1 back as nil and 0 as an empty non-nil
// slice. The Conn passes data through unchanged, so [Conn.Get] returns nil
// for a node created or set with nil and []byte{} for one given empty data,
// as zkmem does ([zksim.Stat].DataLength is 0 for both).
//
// # Sessions
//
// go-zookeeper's session states map to zksim's: connecting, connected
// (session granted or re-established after a disconnect), disconnected,
// expired, auth failed; [Conn.SessionEvents] fans them out, each
// subscriber with its own unbounded buffer, consecutive duplicates dropped.
//
// As with zkmem, a Conn owns one session for its whole life. go-zookeeper
// learns that its session expired when it reconnects; left alone it would
// then open a new session silently. Instead the Conn is finished at that
// point: the go-zookeeper connection is closed (no new session is ever
// opened), every later call returns [zksim.ErrSessionExpired], and every
// pending watch channel receives [zksim.EventNotWatching] with
// ErrSessionExpired. After a disconnect within the session timeout,
// go-zookeeper reconnects to the same session and re-registers the watches
// itself.
//
// # Watches
//
// A watch channel receives exactly one [zksim.Event] and is then closed.
// [Conn.Close] delivers EventNotWatching with [zksim.ErrClosing] to the
// pending ones. Node events carry the state the server sent
// ([zksim.StateConnected]).
//
// # What go-zookeeper cannot do
//
// go-zookeeper has no addWatch, removeWatches, getEphemerals or
// getAllChildrenNumber, so *Conn does not implement
// [zksim.PersistentWatcher], [zksim.EphemeralsLister] or
// [zksim.ChildCounter]: a type assertion for them fails. It also cannot
// carry container or TTL creates inside a multi: [Conn.Multi] refuses them
// with an error wrapping [zksim.ErrUnimplemented] (create them with
// [Conn.Create] and [Conn.CreateTTL] instead).
package gozk
