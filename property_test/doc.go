// Package property holds zksim's property-based tests, written with
// pgregory.net/rapid. Everything is in the _test.go files; this file only
// documents them.
//
// # What is tested
//
//   - TestZkmemModel: zkmem against a plain map model of the tree
//     (model_test.go). Several sessions create (every mode but TTL), delete,
//     set (right and wrong versions), get, exists, list children, run
//     multis, close, expire, disconnect and reconnect; after every step the
//     whole tree (data, children, every Stat field but the times) and the
//     last zxid must equal the model's.
//   - One state machine per recipe family (recipes_test.go): TestLockMutex,
//     TestLockRWMutex, TestLockSemaphore, TestElection,
//     TestElectionSingleNode, TestQueueFIFO, TestQueuePriority,
//     TestQueueLocking, TestBarrier, TestBarrierDouble, TestBarrierStart.
//     Actions are client operations (acquire, release, write to a fenced
//     resource, cancel, offer, take, enter, leave, ...), the faults of the
//     catalogue and the passing of virtual time. The invariants of the
//     design are checked after every step of the simulator; a liveness
//     phase ends every run (faults stop, time passes, every client must
//     progress within 20s of virtual time). See the comment at the top of
//     each *_machine_test.go file.
//   - The flawed recipes of the ZooKeeper literature (flawed_test.go,
//     flawed_lock_test.go, the sloppy consumer in queue_machine_test.go)
//     and those of issue 13 (flaws_test.go, flawed_queue_test.go,
//     flawed_barrier_test.go: a double barrier member leaving early, readers
//     queueing behind readers, a FIFO consumer losing a remove, a locking
//     queue deleting before Ack, a holder blind to its session's expiry):
//     each test passes only when rapid catches the flaw with the expected
//     violation, the failure replays twice from its seed with the same
//     trace, and it logs the shrunk schedule. TestFlawsOnRandomSeeds
//     (ZKSIM_FLAW_SEEDS=20) checks the issue-13 flaws on N random seeds at
//     the CI budget.
//   - TestDeterminism: every check of every recipe machine gives the same
//     trace, byte for byte, under -cpu 1, 2, 4 and -race
//     (determinism_test.go; ZKSIM_TRACE_CHECKS sets the checks per
//     machine, 10 by default).
//
// # How a machine runs
//
// A machine runs on the simulator (package sim), one sim.World per check,
// inside the synctest bubble rapid.SyncTest gives each check, so time is
// virtual. Every client of the machine is a sim client: each request it
// sends, each reply, watch event and change of connection state it gets,
// is a step of the World's scheduler, and nothing reaches the server or a
// client until the scheduler takes that step. The machine hands the
// scheduler's decisions to rapid (sim.Config.Choose and the World's
// fault policy), so the whole schedule is made of rapid's draws, which
// rapid can replay and shrink. The actions every machine has:
//
//   - Step: one scheduler step; rapid picks which enabled event comes next
//     (a request reaching the server, or the head of one client's queue of
//     replies and events reaching it; clients' queues interleave in any
//     order) and the fate of a request: none, a lost reply, a dropped
//     request, or children listed in a shuffled order;
//   - Settle: steps without faults until nothing is enabled;
//   - Advance: virtual time passes (50ms, 400ms or 1.2s, the session
//     timeout being 1s) while the server stays prompt;
//   - Partition: a client's connection breaks, or a broken one heals;
//   - Expire: the server expires a client's session;
//   - Pause: a client process stops (no requests, no heartbeats, nothing
//     delivered: its session expires after the timeout), or resumes;
//   - Delay: what the server sends one client is held back for 100ms or
//     500ms, in order, while the others go on (delayed and reordered
//     delivery across sessions);
//   - Slow: the server takes 20ms or 300ms more over every request for
//     0.5s or 3s.
//
// A lock holder's or leader's write to the protected resource is a call
// outside ZooKeeper (sim.Conn.External), scheduled like a request, so a
// pause or a delay can come between the holder's decision and the write.
// Settle, Advance and the liveness phase leave the scheduler's choices to
// the World's seed, itself the first draw of every check, uniform or by
// PCT priorities of a drawn depth (sim.PCT); and they meet the faults of a
// swarm drawn from that seed (faults.Swarm: a few kinds, often, request
// faults aimed at any request, the writes or the multis), at most two of
// each kind in the liveness phase. A check also draws whether sequence
// numbers start next to the int32 wrap (sim.Config.NearWrap). A client
// whose session ended gets a new one (a new sim client), as an application
// would; a lock holder whose old session's hold still says Held stays
// under the exclusion check. The recipes draw their GUIDs from their sim
// client's seeded stream, so they are the same every time a schedule is
// replayed. Each test also logs a coverage table: the requests of every
// check by area and op, and the faults they met (go run ./cmd/zksim prints
// it). A failure prints the simulator's trace of the run:
// every step, with its virtual time, and the machine's actions and the
// clients' calls and returns as notes. The trace calls the machine's
// client processes p0, p1, ... and the simulator's sessions c0, c1, ...:
// process p1 starts on session c1, and runs on a new session (c3, say)
// once that one has expired.
//
// Each test logs what its checks did, for example
//
//	recipes_test.go:13: 1001 checks: 45624 actions, 123747 simulator steps, 1h16m58s of virtual time
//
// # Seeds, budget and flags
//
// A plain run is deterministic: TestMain gives every property a seed made
// of the committed ciSeed (main_test.go) and the test's name, and each
// test logs it:
//
//	recipes_test.go:13: seed 124341385973339962, 1000 checks (replay: -run '^TestLockMutex$' -rapid.seed=124341385973339962)
//
// so `go test ./...` and CI run the same 1,000 checks per property (the CI
// budget; rapid's own default is 100) every time, and write no fail file
// (the seed replays a failure). A failure under the committed seed is a
// bug to fix, not a seed to change.
//
// Random exploration is its own command: -explore (or ZKSIM_EXPLORE=1)
// draws a new seed per run, prints it, and writes each failure's shrunk
// schedule to testdata/rapid/<Test>/ — commit that file with the fix, and
// it is replayed before the checks of every later run:
//
//	go test ./property_test/ -explore
//	go test ./property_test/ -explore -run '^TestBarrier' -rapid.checks=50000 -timeout 0
//
// (go run ./cmd/zksim explores random seeds too, and prints its seed.)
// rapid's default of about 30 actions per run is kept (the flawed-recipe
// tests use 15, a fixed seed, and 60s to shrink). Longer runs:
//
//	go test -race ./property_test/ -rapid.checks=20000 -rapid.steps=100
//
// (or RAPID_CHECKS, RAPID_STEPS, RAPID_SEED, RAPID_SHRINKTIME in the
// environment); a flag given on the command line always wins. -rapid.v
// logs every check; -rapid.shrinktime bounds the time spent shrinking a
// failure (default 30s, real time).
//
// # Replaying a failure
//
// A failing machine prints its minimal schedule (every action and draw),
// the trace of that run (each request let through, each fault, with
// virtual timestamps) and a line such as
//
//	To reproduce, specify -run="TestLockSemaphore" -rapid.failfile="testdata/rapid/TestLockSemaphore/TestLockSemaphore-20261121152502-19944.fail" (or -rapid.seed=16528238087350856452)
//
// Either replays it, from the repository root:
//
//	go test ./property_test/ -run 'TestLockSemaphore$' -rapid.failfile=testdata/rapid/TestLockSemaphore/TestLockSemaphore-20261121152502-19944.fail -v
//	go test ./property_test/ -run 'TestLockSemaphore$' -rapid.seed=16528238087350856452 -v
//
// The fail file path is relative to property_test/ (where go test runs the
// package); only -explore writes one. It replays the shrunk schedule at
// once, and rapid also replays every fail file under testdata/rapid/<test>/
// before its checks: commit one to turn the failure into a regression test
// (testdata/rapid/TestBarrierDouble/ keeps the double barrier's of issue
// 14), or delete it. The seed replays the whole search (the same checks,
// the same failure, then shrinking again), so -rapid.checks must be at
// least the number of checks the failure needed. The flawed-recipe tests
// write no fail file; their log has the seed.
package property
