// Package explore holds zksim's recipe machines: pgregory.net/rapid state
// machines that drive the built-in recipes (locks, election, queues,
// barriers) on the deterministic simulator (package sim) under the faults
// of the catalogue, and check the recipes' invariants after every step;
// and the deliberately broken recipes of the ZooKeeper literature, which
// the machines must catch and shrink.
//
// [Recipes] are the machines of the real recipes, [Flaws] the broken ones.
// Some recipe machines run again on a 3-member ensemble (ensemble.go: the
// name ends in Ensemble), and two flaws are the stale reads only an
// ensemble shows (flaws25.go).
// Package property_test runs each under go test, from its committed seeds
// ([Machine.Check], [Flaw.Test]); the command cmd/zksim (zksim explore)
// runs them from a seed of its own, outside go test, and reports what they
// found ([Machine.Explore], [Flaw.Catch]). Either way a machine runs inside
// testing/synctest bubbles, so it needs a *testing.T: cmd/zksim runs them
// under the testing package's runner (testing.Main).
//
// # How a machine runs
//
// A machine is a harness.Machine (package harness, through its public API
// alone): a recipe family (its client operations and actions, its
// invariants, its liveness goal) adapted by harness.go, on the harness's
// simulated world, one sim.World per check inside a synctest bubble of
// its own, so time is virtual. Every client of the machine is a sim
// client: each request it sends, each reply, watch event and change of
// connection state it gets, is a step of the World's scheduler, and
// nothing reaches the server or a client until the scheduler takes that
// step. The harness hands the scheduler's decisions to rapid, so the whole
// schedule is made of rapid's draws, which rapid can replay and shrink.
// Each check enables a subset of the catalogue's faults, drawn from its
// seed (swarm testing), and the harness's actions are (see package
// harness and faults.Catalog):
//
//   - Step: one scheduler step; rapid picks which enabled event comes next
//     (a request reaching the server, or the head of one client's queue of
//     replies and events reaching it; clients' queues interleave in any
//     order) and the fate of a request: none, a lost reply, a dropped
//     request, or children listed in a shuffled order;
//   - Settle: steps without faults until nothing is enabled;
//   - Advance: virtual time passes (50ms, 400ms, 1.2s or 5s, the session
//     timeout being 1s);
//   - Partition and Heal: a client's connection breaks, and heals;
//   - Expire: the server expires a client's session;
//   - Pause and Resume: a client process stops (no requests, no
//     heartbeats, nothing delivered: its session expires after the
//     timeout), and resumes;
//   - Delay: what the server sends one client is held back for a while,
//     in order, while the others go on (delayed and reordered delivery
//     across sessions);
//   - Slow: the server takes longer over every request for a while;
//   - FailAuth (the machines' own action, in the recipe machines of
//     Recipes; the flawed recipes' machines go without): a client whose
//     operation waits out a connection loss fails to authenticate when it
//     reconnects (faults.FailAuth: a rotated credential) and is done for
//     good: StateAuthFailed, every call fails with ErrAuthFailed, its
//     session expires at the server's timeout. The operation must not
//     return nil once that struck (a granted hold must say Lost instead),
//     and its process then makes a new client.
//
// A family action named as one of the harness's takes "Call" after its
// name (the election API's Resume is ResumeCall).
//
// A process keeps its recipe objects for its lifetime, as real processes
// do (one Election campaigned, resigned and campaigned again; one Mutex
// locked and unlocked in a loop; one queue consumer taking forever): in
// the lock and election machines each acquisition draws whether the
// process reuses the object of its last acquisition on its session,
// whatever that one's outcome (released, failed, cancelled, Lost), or
// makes a new one, and a process whose hold was Lost may acquire again
// with it without releasing (lockFamily.kept and lostHolders; the
// liveness phase always reuses it); the queue and barrier machines give
// each process one recipe value per session, which every call of the
// process uses, and a double-barrier member whose Leave failed or was
// cancelled may Leave again. A process whose session ended makes new
// objects, unless its client library renews the session (sim.Renewing),
// when the queue and barrier processes keep theirs.
//
// A lock holder's or leader's write to the protected resource is a call
// outside ZooKeeper (sim.Conn.External), scheduled like a request, so a
// pause or a delay can come between the holder's decision and the write.
// Settle, Advance and the liveness phase leave the scheduler's choices to
// the World's seed, itself the first draw of every check, uniform or by
// PCT priorities of a drawn depth (sim.PCT); and, if the check draws so,
// they meet the faults of a swarm drawn from that seed (faults.Swarm: a
// few kinds, often, request faults aimed at any request, the writes, the
// multis or the deletes), at most two of each kind in the liveness phase. A check also draws whether
// sequence numbers start next to the int32 wrap (sim.Config.NearWrap). A
// client whose session ended, or whose authentication failed, gets a new
// one (a new sim client), as an application would; a lock holder whose old session's hold still says
// Held stays under the exclusion check. The recipes draw their GUIDs from
// their sim client's seeded stream (sim.Conn.RandReader), so they are the
// same every time a schedule is replayed, in or out of go test. Each
// machine logs a coverage table: the requests of every check by area and
// op, and the faults they met. A failure prints the simulator's trace of the run:
// every step, with its virtual time, and the machine's actions and the
// clients' calls and returns as notes. The trace calls the machine's
// client processes p0, p1, ... and the simulator's sessions c0, c1, ...:
// process p1 starts on session c1, and runs on a new session (c3, say)
// once that one has expired.
//
// Each family's machine is in <family>_machine.go (lock_machine.go, which
// also runs the elections: election_hold.go; queue_machine.go;
// barrier_machine.go, group_machine.go), with the rest of a recipe's API
// beside it (lock_api.go and protected_api.go: the real locks' whole API,
// third-party deletes, closed sessions, the root package's protected
// create; election_api.go, election_readers.go, election_candidates.go and
// election_thirdparty.go: the rest of the election's API and third
// parties in its directory; election_layout.go and election_foreign.go:
// on one server the Election's candidates follow a layout drawn per check,
// zksim's, Curator's or kazoo's, and meet another library's nodes). Each family's invariants are in
// <family>_invariants.go: lock_invariants.go (and lock_api_invariants.go),
// election_invariants.go (which states those the election shares with the
// lock in election terms), queue_invariants.go, barrier_invariants.go,
// group_invariants.go; the kinds of violation they record, in kinds.go.
// The adapter of a family to package harness is harness.go, the
// violations and the protected resource violations.go; what a recipe call
// may return, and the retry timing on the
// virtual clock, in outcome.go and retrycheck.go. Every machine also checks
// the protected names the recipes create against the form Curator gives
// them (names.go). The flaws of issue 13 are
// in flaws13.go (flawed_queue.go, flawed_barrier.go, flawed_lock.go), that
// of issue 29 (a lock object that carries a failed call's node to its next
// call) in flaws29.go;
// TestFlawsOnRandomSeeds (ZKSIM_FLAW_SEEDS=20) checks that every flaw is
// caught on N random seeds at the CI budget and shrunk to at most 15
// actions, and TestDeterminism that every check of every recipe machine
// gives the same trace, byte for byte, under -cpu 1, 2, 4 and -race
// (ZKSIM_TRACE_CHECKS checks per machine, 10 by default), through
// harness.CompareTraceDumps. Every flaw caught is replayed twice from its
// seed and the traces compared (harness.ExpectCaught), and its shrinking
// is bounded by a number of checks (harness.Machine.ShrinkBudget), not by
// wall-clock time, so its shrunk schedule is a function of the seed.
//
// # Package harness
//
// Package harness is the public exploration harness, with which anyone
// explores coordination code of their own; its README example, a leader
// election on go-zookeeper, the zk.Lock machine of package property_test
// and the machines here are written on it. What the machines here needed
// beyond a Machine's processes, ops and invariants (state shared across
// processes, actions that arrange an interleaving of their own, clients
// renewed by a library, every request applied) is part of its API:
// Machine.Init, Actions, Renewed, OnApply and Parallel; World.Step,
// RunFor, RunUntil, Inject and Quiet; Process.Partition, Heal and
// SetRenewing; harness.Explore.
package explore
