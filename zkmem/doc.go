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
// # Sessions and transports
//
// The server's side of a session is a [*Session], whatever carries its
// requests: the in-process Conn, or a wire-protocol connection.
// [Server.OpenSession] opens one with a negotiated timeout;
// [Server.ResumeSession] attaches a new connection to it by id, password and
// the client's last zxid. Every request, from every transport, passes
// through one executor, [Session.Do]: it takes a [Request] (a typed [OpCode] and
// the request's fields) and returns a [Response] (the reply's fields, the
// reply's zxid, and the [ConnFault] the transport must realise). The session's
// [Sink] hears replies, watch notifications and the closing of its
// connection in the server's order, with the server's lock held, so a
// transport that writes them out in that order keeps ZooKeeper's per-session
// FIFO. [Session.Ping], [Session.Detach] and [Session.Close] are the
// transport's heartbeat, its closed connection, and closeSession.
//
// # Identities and passwords
//
// A session's identities are those of the connection it is attached to,
// as on a ZooKeeper server: "ip" with the client's address (given to
// OpenSession and ResumeSession; an in-process Conn's is
// [DefaultClientAddr] unless [WithClientAddr] says otherwise), written as
// the server writes it, and those addAuth added on that connection. A
// session resumed on a new connection comes back with only its "ip"
// identity; the in-process Conn, as go-zookeeper and kazoo, sends its
// credentials again when it reconnects. "ip" ACLs match as in ZooKeeper
// 3.8: IPv4 expressions with an optional mask; an IPv6 client matches none.
// [Session.Password] is an HMAC of the session id under a secret each
// server draws from crypto/rand ([Server.SetSessionSecret] fixes it, as the
// simulator does from its seed), so a session id alone does not let anyone
// resume the session.
//
// # The fault plane
//
// A session's faults are armed and decided in one place, on the server side,
// reached through its [Control] handle ([Server.Control] with the session
// id), never through the client type:
//
//   - [Control.LoseNextReply]: the server applies the request, then the
//     connection closes before the reply leaves;
//   - [Control.DropNextRequest]: the request never reaches the server, and
//     the connection closes;
//   - [Control.Arm]: either of those for the next N requests an [Aim]
//     picks, by op and by path (a node and the nodes under it);
//   - [Control.SetFaultHook]: a [FaultHook] decides the fault of every
//     request (it is told the armed one); a simulator installs one and
//     decides every request's fate through it;
//   - [Control.Disconnect] and [Control.Reconnect]: the connection closes
//     while the session lives until its timeout; an in-process Conn comes
//     back, its watches restored by the server's setWatches rules;
//   - [Control.Expire]: the server expires the session (ephemerals gone in
//     one transaction, watchers told);
//   - [Control.Pause] and [Control.Resume]: the server hears nothing from the
//     client, and expires the session after its timeout unless resumed;
//   - [Control.Delay]: replies and notifications are held for a while, in
//     order;
//   - [Control.FailNextAuth]: the in-process Conn's next reconnection fails
//     authentication where a server takes it; the Conn ends in
//     [zksim.StateAuthFailed] and the session lives until its timeout.
//
// The in-process Conn realises a closed connection as
// [zksim.ErrConnectionLoss] and [zksim.StateDisconnected], then reconnects
// by itself after a fault ([WithReconnectDelay]); a wire transport closes its
// socket. [Server.Close] makes the server go away.
//
// # Ensembles
//
// [NewEnsemble] builds N members over one committed history, as a
// ZooKeeper 3.8 ensemble. [Ensemble.Connect] opens a session through the
// first member of the client's list ([WithMembers], a connect string) that
// serves; the session is connected to that one member:
//
//   - reads, getChildren, exists and the watches they set are served from
//     the member's applied state, which may lag the leader's: reads are
//     sequentially consistent, not linearizable;
//   - a write goes to the leader, which commits it at once; every member
//     applies the commits in zxid order, and the writer's member answers
//     the write only once it applied it, so a client reads its own writes
//     (its call blocks meanwhile);
//   - sync returns once the member applied everything the leader had
//     committed when the sync reached it;
//   - a watch fires when the member applies the change, so the client
//     hears the event before any reply that shows the new data.
//
// A Conn that loses its member (the member crashed, was isolated, or a
// fault closed the connection) tries the members after it in its list,
// wrapping around. A member that has not applied the last zxid the client
// saw refuses it, as ZooKeeper does, so a client never sees an older state;
// if no member accepts it, it waits, disconnected, until a change lets one.
// The session keeps its ephemerals, and its watches come back with
// setWatches relative to the client's last zxid: an event missed meanwhile
// fires at once.
//
// The members are controlled on the Ensemble, each control taking effect
// at once: [Ensemble.Lag] stops a member applying (commits queue),
// [Ensemble.ApplyNext] applies one commit (cheap and deterministic, a
// scheduler's step), [Ensemble.CatchUp] applies them all;
// [Ensemble.Crash] and [Ensemble.Restart] stop a member and start it again
// (it catches up from the leader); [Ensemble.Isolate] and [Ensemble.Heal]
// cut a member off from the quorum and back. Losing the leader (a crash,
// an isolation, [Ensemble.FailLeaderOnNextWrite]) starts an election: no
// member serves, every client is disconnected and no session expires until
// [Ensemble.Elect] names the next leader, which gives every session a
// fresh timeout. With EnsembleOptions.ReadOnly, a member cut off from the
// quorum serves the clients that allow it ([WithCanBeReadOnly]) in
// read-only mode: zksim.StateConnectedReadOnly, reads from its stale
// state, writes and sync refused with zksim.ErrNotReadOnly.
//
// Internally the ensemble's [Server] (Ensemble.Server) holds the committed
// tree and the sessions, as the leader does. A member that keeps up reads
// that very tree, so an ensemble that keeps up costs about what a single
// server does; a member that falls behind takes a copy of the tree and
// replays a log of each transaction's effects (the nodes inserted and
// removed, in order, so that children list in the server's order, and the
// nodes' fields as committed). EnsembleOptions.Observers makes the last
// members observers: they serve and apply as followers do, but do not
// count in the quorum and never lead.
//
// A client that allows read-only mode may also open a new session on a
// read-only member; unlike ZooKeeper's, which is local to that member
// (localSessionsEnabled), it is a session of the ensemble.
//
// A transport (not a Conn) attaches a session to the member its
// connection reached with [Ensemble.OpenSessionAt] and
// [Ensemble.ResumeSessionAt], which admit or refuse the client by
// ZooKeeper's handshake rules, the same for every transport: zkwire's
// member ports and the simulator's go-zookeeper clients go through them.
// Server.OpenSession and ResumeSession attach a session to the leader (a
// connection to no member in particular, such as zkwire's own port).
//
// A member answers a new session only once it applied the session's
// createSession, as ZooKeeper's does: a lagging member applies the commits
// it lags behind up to it (at once, where a real member's answer waits for
// them), so the client reads every write that returned before it
// connected; the member lags on after it.
//
// getEphemerals is a read too: a member that fell behind lists the
// session's ephemerals as it applied them, in the order of its own copy of
// the session's set, which goes through the leader's adds and removals.
//
// A reconnecting Conn sends its setWatches ahead of its other calls, as a
// client library does: a call made once the Conn published StateConnected
// waits until the setWatches has gone out. Not modelled: a call that read
// the Conn connected just before its connection dropped, and reached the
// server only after the Conn connected again, is served on the new
// connection (before or after the setWatches), where a real client's call
// fails with the old connection. On a lagging member the setWatches then
// waits behind it (Control.Reconnect says more); a control of the
// ensemble that moved the Conn does not wait for it.
//
// # Determinism
//
// Nothing observable depends on Go map iteration order or goroutine timing:
// watchers and the firing order of watch events are kept in ordered
// structures, and children and a session's ephemerals in the same hash
// tables a ZooKeeper 3.8.0 server keeps them in (Java HashSets, modelled
// exactly), so a listing of children comes in the server's order for the
// same history of creates and deletes: neither sorted nor in creation order
// (see Options.SortedChildren). A session that closes or expires loses its
// ephemerals in the order of a clone of its set (DataTree.getEphemerals,
// which closeSession's transaction lists), and other sessions' NodeDeleted
// and NodeChildrenChanged events come in that order; OpGetEphemerals
// answers in that order too, which the wire protocol carries, while
// [Conn.GetEphemerals] sorts, as [zksim.EphemeralsLister] promises. The
// entries an "auth" ACL expands to come in the server's order too. Time
// comes from the time package and
// waiting is done on channels, so inside a testing/synctest bubble every
// timer (session expiry, container and TTL reaping) runs on virtual time.
//
// # Where zkmem differs from a real server
//
// A request larger than
// Options.MaxRequestBytes drops the connection as a real server does, but the
// size is computed from the request's encoded form rather than read off a
// socket. A closing session's own requests still in a real server's
// pipeline change the order its ephemerals go in (PrepRequestProcessor adds
// them to the clone or removes them); zkmem applies each request before the
// next, so it has no such requests.
package zkmem
