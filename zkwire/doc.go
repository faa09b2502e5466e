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
// # Fault controls
//
// Every session can be put under the faults that break coordination code,
// from Go through [Server.Control] and from any language through the HTTP
// control endpoint ([Server.ControlHandler]):
//
//	GET  /sessions                                -> JSON array of live session ids
//	POST /sessions/{id}/expire                    -> the server expires the session
//	POST /sessions/{id}/disconnect                -> the server drops the connection
//	POST /sessions/{id}/lose-next-reply?op=NAME   -> next request applied, reply lost, connection closed
//	POST /sessions/{id}/drop-next-request?op=NAME -> next request dropped unapplied, connection closed
//	POST /sessions/{id}/pause                     -> the server stops hearing the client
//	POST /sessions/{id}/resume                    -> and hears it again
//	POST /sessions/{id}/delay?for=500ms           -> replies and notifications held that long
//
// {id} is decimal or 0x-hex; NAME is ZooKeeper's op name ("create",
// "getData", "multi"...), absent for any op but ping. Answers: 200, 404 for
// an unknown session, 400 for bad input.
//
// # Where it differs from a real server
//
// SASL (op 102) is not offered: it is answered as an unknown op
// (Unimplemented, then the connection closes). Children come back sorted.
// The four-letter words answered by default are ruok, srvr, stat, mntr,
// cons, dump, envi, conf and isro (a real server answers only srvr unless
// 4lw.commands.whitelist says more); Options.FourLetterWords narrows them.
package zkwire
