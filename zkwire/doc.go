// Package zkwire serves zkmem over ZooKeeper's client protocol, so that
// any ZooKeeper client, in any language, talks to an in-process zkmem
// unchanged: go-zookeeper, Curator, kazoo, zkCli.sh.
//
// A [Server] serves any [net.Listener]; [NewTestServer] starts one on
// 127.0.0.1:0 for a test, shaped like httptest.NewServer, with the control
// endpoint beside it. The codec (frames and jute records) is package
// zkwire/jute; this package holds the connection handling: the handshake
// (negotiated timeout, new session or resume by id and password), requests
// run in arrival order per connection, watch notifications interleaved in
// the server's order, pings, closeSession, four-letter words, and the rules
// by which a real server closes a connection (a frame over jute.maxbuffer,
// a malformed header, an unknown op code, a client silent for its session
// timeout).
//
// # Sessions
//
// Sessions are zkmem's (zkmem.Server.OpenSession and ResumeSession): every
// request goes through zkmem.Session.Do, and the connection is the
// session's zkmem.Sink, so replies and notifications leave in the order the
// server produced them. A client silent for its whole session timeout (no
// ping, no request) is expired, as the real server's session tracker does;
// a connection that does not complete the handshake is closed after
// Options.SessionlessTimeout.
//
// A session's "ip" identity is the TCP peer's address (IPv4 or IPv6, as a
// ZooKeeper server writes it; 127.0.0.1 for a connection with no IP peer,
// such as a net.Pipe or a FrameConn), and the identities addAuth adds go
// with the connection: a session resumed on a new connection has only its
// "ip" identity. A connection asking for a live session closes the
// session's connection before its password is checked, as the real server
// does. Session passwords are keyed by a secret of the zkmem server (see
// zkmem.Server.SetSessionSecret), not derivable from the ids that GET
// /sessions, cons and dump show.
// # Ensembles
//
// [NewEnsemble] fronts a zkmem.Ensemble with one port per member
// ([Server.ServeMember]; [NewTestEnsemble] starts one on loopback): a
// session is attached to the member whose port its connection came to,
// reads from that member's applied state, and moves with its client to
// another port, keeping its ephemerals (the client sends setWatches). The
// handshake refuses as ZooKeeper 3.8's processConnectRequest does, by
// closing the connection unanswered: a member in read-only mode refuses a
// client that did not send readOnly=true (and tells one that did, in the
// ConnectResponse's readOnly flag), a member behind the client's last zxid
// refuses it, a member with no leader refuses everybody, and a crashed
// member's port closes what it accepts. [Server.ControlMember] lags,
// crashes, isolates a member and back, electing a leader at once as a
// real ensemble elects one by itself; srvr, stat, mntr and isro answer
// per member (Mode: leader, follower, observer, read-only).
//
// # Authentication
//
// addAuth (digest, ip) and SASL (op 102, after the handshake) run in zkmem
// as on a real server. With zkmem.Options.SASLUsers (a JAAS Server
// section's users, zkmem.ParseJAAS) a client authenticates with
// DIGEST-MD5 and gets the identity sasl:NAME on its connection; a wrong
// password or an unknown user is answered AuthFailed with a null token
// and the connection closes, the session living on. Without SASL users a
// SASL request is answered OK with a null token, as by a server without a
// JAAS file. zkmem.Options.SuperDigest makes the digest auth
// super:PASSWORD pass every ACL check.
//
// # Frame by frame
//
// [Server.NewFrameConn] makes a connection whose frames its owner carries
// instead of a net.Conn: it hands each frame the client sent to
// [FrameConn.Serve] when it decides the server reads it, and gets what the
// server sends through a [FrameOut]. The simulator (package zksim/sim) runs
// go-zookeeper clients this way, each frame a step of its scheduler.
// [Server.NewFrameConnAt] makes one to a member's port of an ensemble
// (NewEnsemble), whose handshake the member admits or refuses
// ([FrameConn.Refused] says why).
// [ParseFrame] describes a request frame as zkmem's request descriptor;
// [FrameConn.ServeFrame] serves the frame so described without decoding it
// again.
//
// # Fault controls
//
// Every session can be put under the faults that break coordination code,
// from Go through [Server.Control] and from any language through the HTTP
// control endpoint ([Server.ControlHandler]). Both drive zkmem's fault plane
// (zkmem.Control), the one the simulator and the in-process Conn use, and
// realise each fault on the TCP connection:
//
//	GET  /                           -> the routes ([ControlRoutes])
//	GET  /sessions                   -> every session as JSON ([SessionStatus])
//	GET  /sessions/{id}              -> one session as JSON
//	GET  /events?since=N&wait=10s    -> the events after N as JSON ([Server.Events]), waiting for one
//	POST /sessions/{id}/expire       -> the server expires the session
//	POST /sessions/{id}/disconnect   -> the server drops the connection
//	POST /sessions/{id}/lose-next-reply?op=NAME&path=/P&count=N
//	                                 -> next N requests applied, reply lost, connection closed
//	POST /sessions/{id}/drop-next-request?op=NAME&path=/P&count=N
//	                                 -> next N requests dropped unapplied, connection closed
//	POST /sessions/{id}/pause        -> the server stops reading the client
//	POST /sessions/{id}/resume       -> and reads it again
//	POST /sessions/{id}/delay?for=500ms -> replies and notifications held that long from now
//	POST /reset                      -> every session ends, the tree is emptied ([Server.Reset])
//	POST /restart?down=2s            -> connections dropped and refused that long ([Server.Restart])
//	GET  /servers                    -> an ensemble's members as JSON ([Server.Members]), by myid from 1
//	POST /servers/{n}/ACTION         -> lag, catch-up, crash, restart, isolate, heal member n ([Server.ControlMember])
//
// {id} is decimal or 0x-hex; NAME is ZooKeeper's op name ("create",
// "getData", "multi"...; "create2", "getChildren2" and the like name the
// same requests), absent for any client request (pings, setWatches and
// closeSession are never hit); /P, absent for any path, aims at the
// requests on /P and the nodes under it (/P/: only under it), see [Aim];
// N, 1 if absent, counts the matching requests hit. Answers: 200, 404 for an unknown session or
// route, 400 for a bad parameter, named in the message. A paused session
// expires after its timeout unless resumed, and its connection then
// closes; a reconnect while paused is not heard either.
//
// GET /sessions ([Server.Sessions]) tells, per session: its id in decimal
// and hex, the address of its latest connection, its state (connected,
// disconnected, paused, expired, closed), its negotiated timeout, the
// faults armed and not fired yet, the faults that hit it so far (with op,
// path and time), and its last op. Ended sessions stay listed (the latest
// 1,000) until a reset. GET /events ([Server.Events]) is the server's log:
// sessions opened, resumed, closed by their client and expired, faults fired,
// resets and restarts, numbered; with since=N it answers those after N,
// and with wait= it waits for one, so that a test waits for a fault to
// fire rather than sleeps. Options.Logf hears the same, and connections.
//
// The endpoint is a test tool for processes on the same machine, and it
// refuses what a web page could make a browser send it (403): a request
// whose Host is not the address it arrived on (127.0.0.1:PORT, [::1]:PORT,
// and localhost:PORT on a loopback address), so a domain rebound to
// 127.0.0.1 gets nothing; and a request carrying an Origin header or a
// Sec-Fetch-Site other than "none", which browsers add to a page's
// requests (a cross-origin POST with Content-Type text/plain included).
// Test clients send neither. [Server.ServeControl] serves it with timeouts
// (5s to send a request's header, 30s idle); "zksim serve" listens only on
// loopback unless told otherwise.
//
// [Server.Close] returns promptly whatever faults are armed: replies a
// Delay holds are dropped, paused readers stop.
//
// # Where it differs from a real server
//
//   - createSession and deleteContainer sent by a client (ops the server
//     uses internally) are answered as unknown ops: Unimplemented, then the
//     connection closes.
//   - SASL knows DIGEST-MD5 only (a real server with Kerberos principals
//     runs GSSAPI), without zookeeper.superUser or
//     zookeeper.SASLAuthenticationProvider.superPassword; and an unknown
//     SASL user is refused, where a 3.8.0 server checks it against the
//     password of the last user it looked up (any connection's).
//   - A request body that does not decode is answered MarshallingError
//     without consuming a zxid (a real server writes an error transaction
//     for some). reconfig is answered with a zxid: ReconfigDisabled, or,
//     when zkmem.Options.ReconfigEnabled is set (zksim serve
//     -reconfigEnabled), Unimplemented by a standalone server; an
//     ensemble's members answer as a 3.8 leader checks the request
//     (BadVersion, BadArguments, MarshallingError, NewConfigNoQuorum,
//     then NoAuth without WRITE on /zookeeper/config, which the world may
//     only read; see zkmem.Reconfig), but a request that passes every
//     check answers Unimplemented, where a real leader changes its
//     membership.
//   - A resumed session keeps the timeout negotiated when it opened; a
//     real server negotiates it anew from the resuming connection's request.
//   - Children come back in zkmem's order, which is the real server's
//     (a Java hash set's iteration order) unless zkmem.Options.SortedChildren.
//   - After Restart, sessions expire a timeout after the drop unless
//     resumed; a real server restarted from its snapshot gives each
//     session it reloads a fresh timeout from the moment it is back.
//     While down, connections are accepted and closed at once rather than
//     refused.
//   - The four-letter words answered by default are ruok, srvr, stat, mntr,
//     cons, dump, envi, conf and isro (a real server answers only srvr
//     unless 4lw.commands.whitelist says more); Options.FourLetterWords
//     narrows them. Their figures are zkmem's; srvr, stat and cons print
//     them in the real server's format (cons: FinalRequestProcessor's op
//     names, latencies in whole milliseconds), except that the version is
//     "3.8.0-zksim" and connections are listed in the order they came, not
//     a Java hash set's. go-zookeeper's FLWCons reads cons; its FLWSrvr,
//     written for ZooKeeper 3.4's date format, can parse neither zksim's
//     srvr nor a real 3.8 server's.
package zkwire
