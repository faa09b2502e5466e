// Package sim is a deterministic simulator for code written against
// [zksim.Conn]: a [World] of simulated clients over one in-memory
// [zkmem.Server], run inside a testing/synctest bubble so that time is
// virtual, and driven by a scheduler that replays any interleaving of
// requests, replies, watch events, faults and timers from a seed.
//
// # Usage
//
//	func TestLockUnderFaults(t *testing.T) {
//		cfg := sim.Config{Seed: 42, Clients: 5, Policy: faults.Mix(0.02)}
//		sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
//			for i := range 5 {
//				conn := w.Conn(i)
//				w.Go(func(ctx context.Context) { /* lock.New(conn, "/lock").Lock(ctx) ... */ })
//			}
//			if err := w.Run(func() bool { return allDone() }); err != nil {
//				t.Fatal(err) // Test then logs the seed and the trace
//			}
//		})
//	}
//
// Inside rapid, call New (and testing/cryptotest.SetGlobalRandom) from
// within rapid.SyncTest instead of using Test.
//
// # How a World runs
//
// Every client owns a [Conn], which implements zksim.Conn (and the optional
// zksim.PersistentWatcher, zksim.EphemeralsLister and zksim.ChildCounter).
// A call on a Conn never touches the server: it becomes a pending request,
// and the calling goroutine blocks until the scheduler delivers its reply
// (or its context ends; the request may then still be applied, exactly as if
// its reply had been lost). Only the scheduler applies requests, one at a
// time, on the session's underlying zkmem.Conn.
//
// What the server sends a session (replies, watch notifications and session
// state changes) goes into that session's outgoing FIFO, in the order the
// server produced it, as on one TCP connection: a session hears of a watch
// event caused by its own request before it gets the reply. Nothing in the
// FIFO reaches client code until the scheduler delivers it.
//
// Each step of the scheduler ([World.Step]):
//
//  1. waits until every goroutine of the bubble is blocked (synctest.Wait);
//  2. collects the requests that arrived, ordered by session then content,
//     and runs the scheduler's own timed actions that are due (a session
//     expiring on the server, a client starting to reconnect, a pause or a
//     delivery delay ending, a request finishing its service time), each a
//     step of its own, in order of time;
//  3. asks the fault [Policy] whether to inject a [StepFault] now; if it does,
//     that is the step;
//  4. otherwise lists the enabled events in a canonical order (apply the
//     head request of a session, by session; then deliver the head of a
//     session's FIFO, by session) and picks one with the seeded random
//     number generator;
//  5. when no event is enabled, lets virtual time pass until the next
//     timer that makes something happen: a client's timer that sends a
//     request, or the next timed action.
//
// Every step appends one human-readable line to the trace, for example:
//
//	step 17 t=1.200s c3 apply create /lock/_c_{g1}-lock- -> /lock/_c_{g1}-lock-0000000004
//
// The enabled events are kept in indexed sets (Fenwick trees over the
// sessions), so a step costs O(log clients), not O(clients).
//
// # Determinism
//
// The same seed gives the same trace, byte for byte: nothing the scheduler
// does depends on map order, goroutine timing or the wall clock. Client code
// must play along: it may use goroutines, channels, timers and contexts
// freely, but must not use math/rand's global source or anything outside
// the bubble. Run checks its condition between steps only; a client that
// changes state without sending anything can call [World.Wake]. Two goroutines of one client that issue
// requests at the same instant are ordered by the requests' content, so
// only two identical requests racing are ordered by chance (which one gets
// which reply).
//
// Each client has its own random stream, seeded from the World's seed and
// the client's index ([Conn.RandReader], the optional zksim.RandSource):
// the recipes draw their GUIDs from it (zksim.RandReader), so which client
// gets which name does not depend on the order the Go scheduler runs
// their goroutines in, under -race or any GOMAXPROCS. Other draws from
// crypto/rand are made deterministic by [Test], which installs a seeded
// source with testing/cryptotest.SetGlobalRandom; and the trace names each
// GUID by its first appearance ({g1}, {g2}, ...). Children are returned
// sorted by sequence number, then name, rather than by GUID.
//
// # Rare interleavings and sequence wrap
//
// Choices left to the seed are uniform by default. [Config.PCT] makes them
// follow PCT (probabilistic concurrency testing, Burckhardt et al., ASPLOS
// 2010): random client priorities, the highest-priority enabled client
// runs, and at Depth-1 change points drawn from the seed the running client
// drops below every other; an interleaving that needs one client to run
// far ahead of another, or to stall at one precise step, becomes likely.
// [Config.NearWrap] starts every node's sequence numbers within 16 of the
// int32 wrap, so ordering code meets 2147483647 followed by -2147483648.
//
// # Coverage
//
// [World.Coverage] counts which requests (by the first component of their
// path, a recipe's directory, and their op) met which faults: the request
// faults that struck them, the failures a broken connection gave them, and
// the step faults (Disconnect, Expire, Pause, Delay) that struck their
// client while they were in flight. Its String is a table in which a blind
// spot is a zero. [Config.OnApply] tells a test of every request the server
// applies, with the client that sent it.
//
// # Faults
//
// The World's fault primitives are on [World.Faults]: [Faults.Disconnect],
// [Faults.Reconnect], [Faults.Expire], [Faults.Pause], [Faults.Resume],
// [Faults.Delay], [Faults.LoseNextReply], [Faults.DropNextRequest],
// [Faults.SlowServer], and a third party's [Faults.DeleteNode] (an
// operator or a cleanup job deleting a recipe's node). [World.Renewing]
// turns a client into a client library that silently replaces an expired
// session with a new one, as Curator's does. Package zksim/faults wraps them in printable [StepFault]
// values and [Policy] implementations (explicit schedules, seeded random
// draws, predicates and combinators). A policy is consulted at every step
// ([Policy.Step]) and for every request as the server admits it
// ([Policy.Request], which sees zkmem's request descriptor), and draws from
// its own seeded generator.
//
// Faults that strike a session on the server's side go through zkmem's
// fault plane, the one place they are armed and decided: every session's
// [zkmem.Control] carries a fault hook the World installs once, which gives
// the request being applied the fault armed for it
// ([Faults.LoseNextReply] and [Faults.DropNextRequest] arm it there), else
// the one its policy decided; disconnections and expiries are the
// Control's. The World decides what the client hears, and when.
//
// # go-zookeeper clients
//
// [World.ConnectZK] hands out a real go-zookeeper client (*zk.Conn from
// github.com/go-zookeeper/zk v1.0.4), whose connections are in-memory pipes
// into zkwire's server logic (zkwire.FrameConn), inside the bubble: its
// goroutines, timers and pings run on virtual time, and it shares the
// World with native clients. What it writes is cut into frames, each a
// request of its session that the scheduler applies as a step (the
// handshake "connect", a "ping", "setWatches", every call); what the
// server sends it (the handshake's answer, replies, notifications, the
// close of the connection) goes into its FIFO and reaches its reads when
// delivered. A client closing a connection is a step ("hangup"), and so is
// each connection attempt ("dial"). The faults go through zkmem's fault
// plane as for native clients: a lost reply or a dropped request closes the
// connection (go-zookeeper reconnects by itself, a second later, and sends
// setWatches); Disconnect closes it and refuses dials for a while; an
// expiry closes it and the client learns on reconnecting (and opens a new
// session, as go-zookeeper does); a pause stops its frames being applied
// and delivered, and the World expires a session it has not heard from
// for its timeout. [World.ZK] returns client i's *zk.Conn.
//
// To keep a seed's trace byte for byte, the World takes out what would
// otherwise decide a run in go-zookeeper: its server shuffle and DNS lookup
// (one address on a standalone server, every member's in the client's
// drawn order on an ensemble, and a host provider behaving as
// DNSHostProvider does with them); its GUIDs (crypto/rand, seeded by [Test]; the trace names
// 32-hex-digit GUIDs as it names UUIDs; goroutines started with
// [World.Go], which waits until each blocks, draw them in a fixed order);
// its setWatches lists in map order (the server gets them sorted); and its
// goroutines' races: frames written between two steps are ordered by
// session, then content, so neither the order in which go-zookeeper's
// send loop picks a request or a ping nor the order in which several
// clients woken at one instant write changes the run; frames written in
// the instant a connection is closed are dropped with it; a connection
// attempt waits for its "dial" step, so that a request sent in the instant
// a connection was lost is always failed with ErrNoServer, as go-zookeeper
// fails what is queued when it starts a new round of servers; and a dial a
// fault refuses hangs until the fault ends or the dial times out.
// go-zookeeper's own timers (pings, read deadlines, the second it waits
// before a new round of servers) cannot race a delivery: the scheduler
// delivers only after synctest.Wait, when every timer due at that instant
// has fired and its goroutine has blocked again.
//
// Left to chance, and outside the trace unless client code makes it
// matter: the order of the EventNotWatching events go-zookeeper sends on
// its session channel when a session expires (map order); two goroutines
// of one client sending identical requests in one instant (which gets
// which reply); and GUIDs drawn in one instant by goroutines not started
// with World.Go (which goroutine gets which GUID: the trace, naming GUIDs
// by first appearance, stays the same, but code that orders or prints the
// raw names does not, nor does the order in which the server deletes two
// ephemerals of one expiring session, by name).
//
// # Ensembles
//
// With [Config.Members] of 2 or more the server is a zkmem ensemble
// ([zkmem.NewEnsemble]): each client connects through its own order of the
// members, drawn from the seed as a shuffled connect string, and reads
// from its member's state. The ensemble's faults are on [Faults]: [Faults.Lag]
// stops a member applying commits, and each of its next commits becomes an
// event of the scheduler ("m1 apply commit (2 pending)"), drawn with the
// clients' events (or picked by Config.Choose, after them); when only
// these are enabled, the seed may also let time pass (up to 100ms) with
// the member behind, so that its clients read stale data across their
// timers. A write or a sync of a client whose member lags waits for it
// ("c1 apply sync / -> waits for its member"), and is answered in the step
// that makes the member apply what it waits for ("note ... c1 answer sync
// / -> ok"). [Faults.CatchUp] applies every commit at once;
// [Faults.Crash] and [Faults.Restart], [Faults.Isolate] and [Faults.Heal]
// stop a member and bring it back (its clients move on to the next member
// of their list, and hear Disconnected then Connected); [Faults.FailLeader]
// makes the leader fail on the next write, committed or lost. Losing the
// leader starts an election, a step of its own half a second later ("m2
// elected leader"). The standalone server's traces are unchanged: none of
// this draws from the seed unless Members is set. Package zksim/faults
// has these faults as rows of its catalogue, which Swarm and Mix draw on
// an ensemble only.
//
// A go-zookeeper client ([World.ConnectZK]) on an ensemble is given every
// member's address ("m2.zksim:2181"), in its drawn order, and each
// connection it dials reaches one member, which treats it as a ZooKeeper
// 3.8 server does: a crashed member refuses the dial ("c1 dial m0 ->
// refused: down"); one that serves nobody (an election, cut off from the
// quorum) or has not applied the last zxid the client saw closes the
// connection at the handshake ("c1 apply connect #3 session 0x... ->
// refused: m2 applied zxid 5, the client saw 9"), and go-zookeeper goes on
// to its next address, waiting a second after a whole round; one that
// takes it serves its session ("-> session 0x... timeout 10s on m1"):
// reads from its state, writes and syncs waiting for it, watches fired as
// it applies. Losing its member closes the connection, and go-zookeeper
// resumes the session elsewhere, ephemerals kept, watches sent again with
// setWatches. A frame that waits for its member holds its connection's
// later frames behind it (a server's pipeline holds a session's requests
// behind its pending ones), and the session is not expired meanwhile, nor
// while there is no leader. go-zookeeper never asks for read-only mode, so
// a member in read-only mode refuses it.
//
// # Cost model
//
// [CostModel] gives the server a service time per request and per byte, and
// a number of requests it serves at once (one by default). With a non-zero
// cost a request is admitted in one step and applied in a later step, when
// its service time has passed, so virtual time measures how long a lock
// handoff or a failover takes.
//
// # Driving the scheduler from a property test
//
// A property-based test can take the scheduler's decisions itself, so that
// its generator can shrink a failing schedule: [Config.Choose] picks the
// event of each step among the enabled ones (in the canonical order
// above, each a [Choice]: what it does, and to which session or member,
// so that a generator can pick by identity), and a [Policy] whose Request draws from the test's generator
// decides the fate of each request. [World.Enabled] says how many events
// a step could take without time passing, [World.InFlight] whether a client
// has requests or news still on their way. A call a client makes to a
// service outside ZooKeeper (a protected resource that checks fencing
// tokens, say) can go through [Conn.External], scheduled like a request.
// Package zksim/explore drives every recipe this way with
// pgregory.net/rapid (under go test in property_test, and in zksim explore).
//
// # Replay
//
// [Test] runs a body in a synctest bubble with a World built from a Config;
// when the test fails it logs the seed and the whole trace. Running the same
// test with the same seed replays the same schedule.
package sim
