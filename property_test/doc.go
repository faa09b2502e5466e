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
//   - One state machine per recipe family (explore.Recipes, run by
//     recipes_test.go): TestLockMutex,
//     TestLockRWMutex, TestLockSemaphore, TestElection,
//     TestElectionSingleNode, TestQueueFIFO, TestQueuePriority,
//     TestQueueLocking, TestBarrier, TestBarrierDouble, TestBarrierStart;
//     and every one of them again on a 3-member ensemble, at a tenth of
//     the checks: TestLockMutexEnsemble, ..., TestBarrierStartEnsemble
//     (their findings: testdata/findings25/README.md).
//     Actions are client operations (acquire, release, write to a fenced
//     resource, cancel, offer, take, enter, leave, ...), the faults of the
//     catalogue and the passing of virtual time. The invariants of the
//     design are checked after every step of the simulator; a liveness
//     phase ends every run (faults stop, time passes, every client must
//     progress within 20s of virtual time). See the comment at the top of
//     each *_machine.go file of package explore.
//   - The flawed recipes of the ZooKeeper literature and of issues 13,
//     29 and 25 (stale reads on an ensemble)
//     (explore.Flaws, run by flawed_test.go): each test passes only when
//     rapid catches the flaw, the failure replays twice from its seed with
//     the same trace, and it logs the shrunk schedule.
//   - TestRenewingSessionLosesLock: a lock held through a client that
//     silently renews its expired session (sim.Renewing) says Lost.
//   - go-zookeeper's own zk.Lock (v1.0.4), unchanged, on go-zookeeper
//     clients the simulator hands out (zklock_machine_test.go): TestZKLock
//     passes only when rapid finds the orphan zk.Lock leaves when Lock
//     fails after creating its node and the failure replays twice from its
//     seed with the same trace, and logs the shrunk schedule.
//     TestZKDeterminism (zklock_determinism_test.go) checks that the
//     machine's checks give the same traces under -cpu 1, 2, 4 and -race.
//
// # How a machine runs
//
// The recipe machines, their harness, invariants and the flawed recipes
// live in package explore (a non-test package, so that cmd/zksim can run
// them outside go test); see its documentation. Each test logs what its
// checks did, for example
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
// bug to fix, not a seed to change. The flawed recipes, then the recipe
// machines and the zkmem model test, run in parallel (t.Parallel, after the other tests, in two
// phases that each set rapid's flags for their kind: phases_test.go), each
// check still a function of its seed alone (recipes_test.go); the
// go-zookeeper machines, which set crypto/rand's global source, run one
// at a time.
//
// Random exploration is its own command: -explore (or ZKSIM_EXPLORE=1)
// draws a new seed per run, prints it, and writes each failure's shrunk
// schedule to testdata/rapid/<Test>/ — commit that file with the fix, and
// it is replayed before the checks of every later run:
//
//	go test ./property_test/ -explore
//	go test ./property_test/ -explore -run '^TestBarrier' -rapid.checks=50000 -timeout 0
//
// (zksim explore, or go run ./cmd/zksim explore in a checkout, explores
// random seeds too, outside go test, and prints its seed.)
// rapid's default of about 30 actions per run is kept (the flawed-recipe
// tests use 15 and a fixed seed, and shrink until no smaller schedule
// fails the same way or the harness's budget of checks is spent, not for
// a time: their shrunk schedules are functions of the seed). Longer runs:
//
//	go test -race ./property_test/ -rapid.checks=20000 -rapid.steps=100
//
// (or RAPID_CHECKS, RAPID_STEPS, RAPID_SEED, RAPID_SHRINKTIME in the
// environment); a flag given on the command line always wins. -rapid.v
// logs every check; -rapid.shrinktime bounds the time spent shrinking a
// failure, besides the harness's budget of checks (default here:
// harness.ShrinkCap, an hour, out of the way, so that a shrunk schedule
// is the same on an idle and a loaded machine; rapid's own is 30s).
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
// before its checks: commit one to turn the failure into a regression test,
// and delete it once the machine's actions change (a fail file is a list
// of draws: under other actions it replays another schedule). The files
// under testdata/rapid-inorder/<test>/ were recorded before each action
// drew a seed of its own: each machine replays them first, with
// explore.Machine.DrawsInOrder (recipes_test.go). The seed replays the whole search (the same checks,
// the same failure, then shrinking again), so -rapid.checks must be at
// least the number of checks the failure needed. The flawed-recipe tests
// write no fail file; their log has the seed.
package property
