// Package zktest runs a test on every zksim backend: on zkmem, the
// in-process server, and on a real ZooKeeper 3.8 started on loopback by
// zkserver and reached through gozk. It is written once here and used by
// the conformance suite, the recipes' tests and the differential test.
//
// One zkmem.Options value describes the server on both sides: [OpenMem]
// starts a zkmem server with it, and [OpenReal] starts a real ZooKeeper
// with the configuration it implies ([ServerOptions]: tickTime, the session
// timeout bounds, TTL nodes, the container check interval, jute.maxbuffer,
// reconfigEnabled).
// Either way the result is a [Backend]: how to open a session, the test
// controls the backend has (expire a session, drop and restore a
// connection, set the next sequence number), and its Facts, the options
// with every default filled in by zkmem itself ([WithDefaults]), never
// repeated by hand.
//
// [Run] runs one function on each backend as the subtests "zkmem" and
// "ZooKeeper":
//
//	zktest.Run(t, zktest.FastOptions(), func(t *testing.T, b *zktest.Backend) {
//		conformance.Run(t, conformance.Backend{Backend: *b})
//	})
//
// [Cases], [RunMem] and [RunReal] are the table form the recipes use: each
// case gets an [Env] with its backend and a fresh root. On zkmem every case
// runs in its own testing/synctest bubble with a fresh server (virtual
// time, so timeouts cost nothing; [Env.Settle] waits until everything that
// can happen has happened); on the real server the cases share one server,
// one root each. Cases that need zkmem's own controls (lost replies,
// dropped requests, fault hooks) open their sessions with [Env.MemConn] and
// are listed only for zkmem; [Flaky] and [NthRequest] build fault hooks for
// them. [WaitChildren], [Go], [Recv] and [Pending] help a case wait for a
// blocking call without sleeping.
//
// # Ensembles
//
// [Ensemble] is an ensemble opened for a test, with the controls that make
// its members disagree (Lag, CatchUp, Crash, Restart, Isolate, Heal) and
// Connect, which opens a session whose client walks a list of members in
// order. [OpenMemEnsemble] opens a zkmem one (zkmem.NewEnsemble, read-only
// mode on; it elects a leader by itself whenever a control leaves none, as
// a real ensemble does), [OpenRealEnsemble] a real one (zkserver.StartEnsemble);
// conformance.RunEnsemble runs the ensemble cases on either. On zkmem a
// read-only session (ConnectReadOnly) is a session of the ensemble, while a
// real member grants one local to itself (localSessionsEnabled).
//
// # When ZooKeeper is missing
//
// The real backend needs ZooKeeper and java installed (the Debian
// zookeeper package). Without them [OpenReal] skips the test with a message
// saying how to install them; when the environment variable CI is "true"
// it fails the test instead, so that continuous integration never skips
// the real server silently (zkserver decides).
package zktest
