// Package harness explores coordination code of one's own — a leader
// election, a lock, a job runner — on the deterministic simulator (package
// sim) under the faults of the catalogue, as a pgregory.net/rapid state
// machine: it finds a schedule that breaks an invariant, shrinks it to a
// minimal one, and replays it from its seed.
//
// The user declares a Machine: the processes (their code, made by New on
// a client of the simulator: a zksim.Conn, or an unchanged go-zookeeper
// *zk.Conn), the operations a process may be asked to do (Ops), named
// invariants checked after every scheduler step (Invariants), and what
// must hold once faults stop (Eventually). Check explores it:
//
//	harness.Check(t, harness.Machine[*Elector]{
//		Client: harness.GoZK,
//		New:    func(p *harness.Process[*Elector]) *Elector { return &Elector{Conn: p.ZK()} },
//		Ops:    map[string]func(*rapid.T, *harness.Process[*Elector]){"Campaign": ...},
//		Invariants: []harness.Invariant[*Elector]{{Name: "two leaders", Check: ...}},
//	})
//
// The harness supplies the rest, every part of it drawn by rapid, so that
// a failure is a schedule rapid can replay and shrink:
//
//   - scheduler steps: a Step action lets rapid pick which enabled event
//     comes next (a request reaching the server, or the next reply, watch
//     event or state change reaching one client) and the fate of the
//     request it admits (a lost reply, a dropped request, shuffled
//     children); the pick is by what the event is (rendezvous hashing over
//     sim.Choice), not by its place among the enabled ones, so a later
//     Step picks the same event when rapid drops an earlier action;
//     Settle and Advance leave the choices to the World's seed, uniform
//     or by PCT priorities of a drawn depth, while virtual time passes,
//     each action from a seed of its own (a draw mixed with the World's);
//   - the faults: each check enables a subset of Machine.Faults drawn from
//     its seed (swarm testing), and draws them as actions: Partition (and
//     Heal), Expire, Pause (and Resume), Delay, Slow, FailAuth; a fault and
//     its end are separate actions, so that rapid can drop either as it
//     shrinks; the calm stretches meet a swarm of the catalogue's faults
//     (faults.Swarm); each fault, its action, whom it strikes and what it
//     draws is a row of faults.Catalog;
//   - with Machine.Members, an ensemble of that many members: each
//     process's session is served by one member, whose reads may lag the
//     leader's commits, and the checks draw the ensemble's faults too: Lag
//     (and CatchUp), Crash (and Restart), Isolate (and Rejoin) and
//     FailLeader, each on a member rapid draws ("Lag m1" in the schedule);
//     a Settle leaves a lagging member behind;
//   - sequence numbers next to the int32 wrap (a draw per check), and, with
//     Machine.Renewing, Native clients that replace an expired session as
//     Curator does;
//   - the liveness phase: faults stop, paused processes resume, partitions
//     heal, members restart, rejoin and catch up; Machine.Liveness restarts what each process must still do, and
//     every Eventually condition must hold within Machine.LiveBound of
//     virtual time; a stretch that takes over 2,000 steps without time
//     passing is a "livelock"; a check that takes no simulator step for
//     10 s of wall-clock time (a process deadlocked on a sync.Mutex, or
//     spinning, which no virtual time ends) crashes the test binary with
//     every goroutine's stack, as one that runs for a minute does;
//   - on failure: the violations (typed: Violation, with the invariant's
//     name, the details and the virtual time), where each process is, and
//     the simulator's trace of the run (every step at its virtual time,
//     each operation's start and return as notes); after the checks, a
//     coverage table of which requests met which faults, go-zookeeper
//     clients included.
//
// # Determinism
//
// Every check runs in a testing/synctest bubble of its own (do not wrap
// Check, Property or ExpectCaught in rapid.SyncTest or synctest.Test), so
// time is virtual, and crypto/rand is made deterministic for the test; a
// check is a function of rapid's draws alone, so its seed or fail file
// replays it byte for byte, under -race and any -cpu. Process code must
// play along: no wall clock, no math/rand global source, no goroutines
// outside the bubble, and state shared with invariants guarded by a mutex
// or atomics (invariants run on the machine's goroutine).
//
// A check fails with the names of the invariants broken and nothing else,
// so rapid shrinks a failure to the smallest schedule that breaks the same
// invariants whatever their details say (a step number, a time, a node's
// name). Check, Catch and ExpectCaught let rapid shrink until no smaller
// schedule fails the same way or Machine.ShrinkBudget checks have run
// (unless RAPID_SHRINKTIME is set, or -rapid.shrinktime to other than
// rapid's default), rather than for 30s of wall-clock time, so the shrunk
// schedule is a function of the seed alone: the same on an idle laptop
// and a loaded CI machine, and whatever ran before in the process.
// rapid's shrinker stops in a local minimum that depends on the failure
// it starts from, so Catch and ExpectCaught shrink three failures
// (CatchOptions.Shrinks) and keep the shortest schedule.
//
// # Planted bugs
//
// ExpectCaught asserts that a machine catches a bug: it passes only if a
// check breaks one of the invariants named, replays the failure twice from
// its seed (the traces must match byte for byte), and logs the shrunk
// schedule. It reads and writes no fail file, so it behaves the same in any
// package. Catch reports the same without failing the test.
//
// # Machines whose processes share state
//
// A machine whose invariants follow every process and every request (the
// recipe machines of package explore) has hooks: Machine.Init draws the
// check's parameters of its own and makes what spans the processes
// (Process.SetRenewing gives a process a client library that renews its
// session; Machine.Renewed is told when it did), Machine.Actions are
// actions that pick their process themselves and may arrange an
// interleaving (World.Step, RunFor, RunUntil, Inject, Quiet; Process
// Partition and Heal), Machine.OnApply is told of every request applied.
// With Machine.Parallel its checks may run in parallel tests, and Explore
// (and Catch with CatchOptions.Concurrent) reports what the checks found
// without setting any flag of rapid's.
//
// # Processes and sessions
//
// A Native process runs on a simulated zksim.Conn (Process.Conn); once its
// session ended and it runs nothing, it gets a new client and New makes it
// a new object (the trace says "p1 new session c4"). A GoZK process keeps
// one *zk.Conn (Process.ZK) and one object for the whole check: go-zookeeper
// opens a new session by itself after an expiry. Process.SessionLive asks
// the server about the session the process's client is on now: a process
// that still believes it leads on a session that expired is what an
// invariant such as "at most one leader on a live session" catches.
package harness
