// Package zkserver runs a real Apache ZooKeeper for Go tests, the way
// Curator's TestingServer does for Java.
//
// [Start] launches ZooKeeper 3.8 from the Debian `zookeeper` package as a
// child JVM (org.apache.zookeeper.server.ZooKeeperServerMain) on a free
// 127.0.0.1 port ([WithClientPortAddress] picks another loopback address,
// such as ::1), with its own temporary data directory and configuration,
// waits until it answers the `ruok` four-letter word with `imok` and `srvr`
// reports it serving (`ruok` answers a moment before sessions are
// accepted), and stops it (SIGKILL to its process group, then wait) when the
// test ends. Its output goes to a log file; when the test fails the log is
// kept in the system's temporary directory and its tail printed.
//
// Every server runs with:
//
//   - tickTime=100, so the server clamps session timeouts to [200ms, 2s];
//   - -Dzookeeper.extendedTypesEnabled=true (TTL nodes);
//   - -Dznode.container.checkIntervalMs=100 (containers and TTL nodes are
//     reaped within about 100ms of becoming eligible);
//   - 4lw.commands.whitelist=* and the admin server disabled;
//   - a small heap (-Xmx256m, serial GC).
//
// Options add zoo.cfg lines ([WithConfig]) and JVM system properties
// ([WithSystemProperty]) after these, so they can override them.
//
// A start costs one to four seconds, so a package with many tests shares
// one server with [Shared] (started once per test binary) and gives every
// test its own root path ([Server.Root]). [Server.Connect] opens a gozk
// session closed at cleanup; [Server.FourLetterWord], [Server.LastZxid],
// [Server.SessionAlive] and [Server.WaitSessionGone] look at the server
// from outside.
//
// # Ensembles
//
// [StartEnsemble] starts a real ensemble of n members
// (org.apache.zookeeper.server.quorum.QuorumPeerMain), each with its own
// data directory, myid and zoo.cfg, on 127.0.0.1, and waits until every
// member serves and one leads (three members take about 4 seconds on a
// quiet 2-core machine, up to 11 on a busy one). Members run lean (-Xmx128m, serial GC, the client JIT
// only), with read-only mode on, initLimit=100 and syncLimit=50.
//
// The members reach each other's quorum and election ports only through
// loopback links the Ensemble owns (each member's zoo.cfg names the links
// as the other members' addresses; an election link rewrites the address
// a member announces, so that calls back go through a link too). That is
// how the test controls the ensemble without touching the machine's
// firewall: [Ensemble.Isolate] cuts every link of a member (a cut-off
// follower turns read-only), [Ensemble.Lag] holds what a member receives
// from the others so that it stops applying commits while it goes on
// serving its clients, [Ensemble.Crash] kills a member and
// [Ensemble.Restart] starts it again on its data. [Ensemble.Leader],
// [Ensemble.Mode], [Ensemble.WaitMode] and [Ensemble.LastZxid] ask the
// members with `srvr`. With reconfigEnabled=true the members adopt the
// leader's configuration, in which a member's own election address is a
// link it cannot bind: such an ensemble needs [WithDirectLinks] (the
// members reach each other directly; Isolate and Lag panic).
//
// A [Router] stands for one client's connect string: it hands the client's
// connections to members in a fixed order, where real clients shuffle
// theirs. [DialReadOnly] opens a session as a client that allows read-only
// mode, which go-zookeeper cannot do; a 3.8 member in read-only mode
// serves local sessions only, so a test restarts an isolated member with
// localSessionsEnabled=true ([Ensemble.SetMemberConfig]) to see it serve.
//
// # When ZooKeeper is missing
//
// If java or the ZooKeeper jar cannot be found, [Start] and [Shared] skip the
// test with a message saying how to install ZooKeeper
// (`apt-get install zookeeper`). When the environment variable CI is "true"
// they fail the test instead: continuous integration must run the real-server
// tests, never skip them silently. A server that is installed but fails to
// start always fails the test.
//
// The locations can be overridden with ZKSIM_JAVA (the java binary) and
// ZKSIM_ZOOKEEPER_CLASSPATH (a classpath holding ZooKeeper and its
// dependencies).
//
// # Cutting connections
//
// [Proxy] is a loopback TCP proxy to put between a client and the server.
// [Proxy.Cut] closes the live connections and holds new ones unanswered
// until [Proxy.Restore]; holding the cut longer than the session timeout
// makes the real server expire the session ([Server.WaitSessionGone] tells
// when it has); [Proxy.Connect] opens a session through the proxy.
package zkserver
