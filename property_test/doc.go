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
//     catalogue (a lost reply and a dropped request on any request, a
//     partition and its end, session expiry, a process pause and its end)
//     and the passing of virtual time. The invariants of the design are
//     checked after every step; a liveness phase ends every run (faults
//     stop, time passes, every client must progress within 20s of virtual
//     time). See the comment at the top of each *_machine_test.go file.
//   - The flawed recipes of the ZooKeeper literature (flawed_test.go,
//     flawed_lock_test.go, the sloppy consumer in queue_machine_test.go):
//     each test passes only when rapid catches the flaw, and it logs the
//     shrunk schedule.
//
// # How a machine runs
//
// A machine runs on zkmem inside a testing/synctest bubble (one per check,
// rapid.SyncTest), so time is virtual. Every client request waits at a
// gate (internal/sched) until the machine lets it through, with a fault or
// without: only one client runs at a time, and the whole schedule is made
// of rapid's draws. Actions: Step (one waiting request goes through,
// perhaps with a lost reply or a dropped request), Settle (all go through,
// no faults), Advance (virtual time passes; running clients' requests are
// answered within 50ms meanwhile), Partition (drop a connection, or bring
// it back), Expire, Pause (freeze a process, or thaw it), and the family's
// operations. Each check starts crypto/rand from the same seed
// (testing/cryptotest), so the recipes' GUIDs, hence the traces, are the
// same every time a schedule is replayed.
//
// The recipe machines do not use package sim: it was being written at the
// same time. The gate plays its scheduler's part for these tests.
//
// # Budget and flags
//
// TestMain raises rapid's default to 1,000 checks per property (the CI
// budget); rapid's default of about 30 actions per run is kept (the
// flawed-recipe tests use 15, and 60s to shrink). Longer runs:
//
//	go test -race ./property_test/ -rapid.checks=20000 -rapid.steps=100
//	go test ./property_test/ -run 'TestLockMutex$' -rapid.checks=100000
//
// (or RAPID_CHECKS, RAPID_STEPS, RAPID_SHRINKTIME in the environment); a
// flag given on the command line always wins. -rapid.v logs every check;
// -rapid.shrinktime bounds the time spent shrinking a failure (default
// 30s, real time).
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
// package). It replays the shrunk schedule at once, and rapid also replays
// every fail file under testdata/rapid/<test>/ before its random checks:
// keep one to turn the failure into a regression test, or delete it. The
// seed replays the whole search (the same checks, the same failure, then
// shrinking again), so -rapid.checks must be at least the number of checks
// the failure needed. The flawed-recipe tests write no fail file; their
// log has the seed.
//
// # Known recipe issue (not a violation unless -property.strict)
//
// The recipes give a cancelled call one and a half session timeouts
// (retry.CleanupContext) to delete the node it created, on the grounds that
// a connection down that long means an expired session. A connection that
// flaps (or a process that pauses) for that long in total keeps its session
// alive, the cleanup gives up, and the node stays: an orphan that blocks
// every later contender until the session ends. The machines report it as
// "KNOWN ISSUE" in the trace and expire the owner's session so the run goes
// on; -property.strict makes it an "orphan" violation again:
//
//	go test ./property_test/ -run 'TestElection$' -property.strict -rapid.checks=20000
package property
