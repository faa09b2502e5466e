package harness

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// Machine describes the exploration of coordination code of one's own: its
// processes, the operations they may be asked to do, its invariants and its
// liveness goal. The harness supplies everything else from rapid's draws
// (see the package documentation). P is the type of a process's object:
// the code under test, bound to the process's client (an elector, a worker,
// a lock user).
//
// Only New is required.
type Machine[P any] struct {
	// Name names the machine in logs and coverage tables (default "machine").
	Name string
	// Processes is the number of client processes (default 3).
	Processes int
	// Client is the client library the processes use (default Native).
	Client Client
	// Members, if 2 or more, runs the checks on a ZooKeeper ensemble of
	// that many members (3 and 5 are ZooKeeper's usual sizes) rather than
	// a standalone server (0 or 1): each process's session is served by
	// one member, whose reads may lag the leader's commits
	// (sim.Config.Members), and the checks also draw the ensemble's
	// faults: Lag (and CatchUp), Crash (and Restart), Isolate (and
	// Rejoin) and FailLeader, each striking a member drawn by rapid. The
	// liveness phase catches up, restarts and heals every member first.
	// A GoZK process's client is given every member's address, in an
	// order drawn from the seed, and moves between members as
	// go-zookeeper does.
	Members int
	// ZKOptions are go-zookeeper's options for a GoZK process's client
	// (sim.World.ConnectZK's). go-zookeeper gives each connection a
	// receive buffer of 1.5 MiB, cleared as it is made, by far the
	// dearest part of a check of a few steps: a machine whose replies are
	// small may bound it with zk.WithMaxBufferSize (a longer reply then
	// fails its connection).
	ZKOptions []func(*zk.Conn)
	// SessionTimeout is the session timeout the clients ask for (default
	// 1s; the server's tickTime is a tenth of it, so the server grants it).
	SessionTimeout time.Duration
	// Setup, if set, runs once before the processes start, on a client of
	// its own that the scheduler does not see: create the parent nodes
	// here. Its error fails the check.
	Setup func(ctx context.Context, conn zksim.Conn) error
	// New makes a process's object. It is called when the process starts,
	// and again when a Native process gets a new session after its old one
	// ended (a go-zookeeper client, and a Renewing one, keep theirs: the
	// library renews the session under the same object). It runs on the
	// machine's goroutine; start long-running work with Process.Go.
	New func(p *Process[P]) P
	// Ops are the operations a process may be asked to do, by name. Each
	// is a rapid action: the harness draws an awake process and calls the
	// operation with it. A blocking operation should run in Process.Go so
	// that the schedule can go on while it waits; an operation that cannot
	// run now (say, nothing to release) calls t.SkipNow.
	Ops map[string]func(t *rapid.T, p *Process[P])
	// Invariants are checked after every scheduler step and every action,
	// and through the liveness phase. A violated invariant fails the check
	// with its name (see Violation).
	Invariants []Invariant[P]
	// Eventually are the conditions that must all hold within LiveBound of
	// virtual time once faults stop (the liveness phase). The phase ends
	// as soon as they all hold; one still failing at the bound fails the
	// check with a "liveness" violation naming it.
	Eventually []Invariant[P]
	// Liveness, if set, is called for every process at each look of the
	// liveness phase: start there what the process must still do (campaign
	// again, lock again), as the application would.
	Liveness func(p *Process[P])
	// LiveBound is the virtual time the liveness phase allows (default 20
	// session timeouts).
	LiveBound time.Duration
	// Faults are the faults the checks may draw; each check enables a
	// subset of them, drawn from its seed (swarm testing). The zero value
	// is every fault of the catalogue the client supports; NoFaults
	// leaves only scheduling and time.
	Faults Fault
	// Renewing draws, for each Native process, whether its client is a
	// library that replaces an expired session at once under the same
	// object, as Curator's does (sim.World.Renewing); without it Native
	// processes get a new client, and a new object, once their session
	// ended and nothing of theirs runs.
	Renewing bool
	// ShrinkBudget bounds the shrinking of a failure by the number of
	// checks rapid runs after the first failure (default 20,000: in
	// practice until no smaller schedule fails the same way; the
	// environment variable ZKSIM_SHRINK_BUDGET overrides it), so that the
	// shrunk schedule depends on the seed alone, not on how fast the
	// machine runs. A negative budget shrinks until no smaller schedule
	// fails the same way.
	ShrinkBudget int
	// DrawsInOrder replays schedules recorded before each action drew a
	// seed of its own (zksim's harness before 2026-11-27): the calm
	// stretches then took the World seed's choices from one stream, in
	// order. Set it only to replay a fail file recorded so; such a
	// schedule shrinks poorly, as dropping an action shifts what every
	// later stretch draws.
	DrawsInOrder bool
	// NoWrap keeps sequence numbers starting at 0. Without it each check
	// draws whether they start next to the int32 wrap (sim.Config.NearWrap),
	// so ordering code meets 2147483647 followed by -2147483648.
	NoWrap bool

	// The hooks below are for a machine whose processes share state of
	// the check's own (a recipe machine of package explore, whose
	// invariants follow every process and every request).

	// Init, if set, runs once per check after the processes are made and
	// before New makes their objects: draw there the check's parameters
	// of the machine's own (a group's size, which processes run a
	// Renewing library: Process.SetRenewing) and make what spans the
	// processes.
	Init func(t *rapid.T, w *World[P])
	// Actions, if set, returns the check's actions of the machine's own,
	// by name; it is called once per check, after Init. Unlike an Op, an
	// action draws what it needs itself (which process, among those in
	// the state it wants), and may arrange an interleaving of its own with
	// World.Step, World.RunFor, World.Inject and World.Quiet. A name
	// taken by an Op or by an action of the harness fails the check.
	Actions func(w *World[P]) map[string]func(t *rapid.T)
	// Renewed, if set, is called when a Renewing process's library
	// replaced its expired session (the trace says "p1 renewed: session
	// c4"): Process.Session names the new one.
	Renewed func(p *Process[P])
	// OnApply, if set, is told of every request the server applies, with
	// the session (simulator client) that sent it (sim.Config.OnApply).
	OnApply func(w *World[P], session int, r *zkmem.Request)
	// Parallel lets the checks run in parallel tests (t.Parallel): the
	// harness then leaves crypto/rand alone (testing/cryptotest, which
	// makes it deterministic, forbids parallel tests), so the processes
	// must draw nothing from it (zksim.RandReader of their Conn gives a
	// stream of the seed's).
	Parallel bool
}

// ShrinkBudgetEnv is the environment variable that overrides every
// machine's ShrinkBudget.
const ShrinkBudgetEnv = "ZKSIM_SHRINK_BUDGET"

// defaultShrinkBudget is ShrinkBudget's default.
const defaultShrinkBudget = 20000

// Client is the client library a machine's processes use.
type Client int

const (
	// Native processes use a zksim.Conn of the simulator (Process.Conn).
	Native Client = iota
	// GoZK processes use an unchanged go-zookeeper *zk.Conn whose
	// connection runs through the simulator (Process.ZK). go-zookeeper
	// replaces an expired session with a new one by itself, under the same
	// *zk.Conn.
	GoZK
)

func (c Client) String() string {
	switch c {
	case Native:
		return "native"
	case GoZK:
		return "go-zookeeper"
	}
	return fmt.Sprintf("Client(%d)", int(c))
}

// Invariant is a named property of the whole system. Check returns nil
// when it holds, else an error saying what is wrong (the details: who,
// which node, which token). The name, not the error's text, identifies the
// violation: rapid shrinks a failure to the smallest schedule that violates
// the same invariants, whatever the details say (a step number, a time).
type Invariant[P any] struct {
	Name  string
	Check func(w *World[P]) error
}

// withDefaults returns m with its defaults filled in, or an error for a
// machine that cannot run.
func (m Machine[P]) withDefaults() (Machine[P], error) {
	if m.New == nil {
		return m, fmt.Errorf("harness: Machine.New is nil")
	}
	if m.Name == "" {
		m.Name = "machine"
	}
	if m.Processes == 0 {
		m.Processes = 3
	}
	if m.Processes < 0 {
		return m, fmt.Errorf("harness: Machine.Processes is %d", m.Processes)
	}
	if m.Members < 0 {
		return m, fmt.Errorf("harness: Machine.Members is %d", m.Members)
	}
	if m.SessionTimeout == 0 {
		m.SessionTimeout = time.Second
	}
	if m.SessionTimeout < 20*time.Millisecond {
		return m, fmt.Errorf("harness: Machine.SessionTimeout %v is below 20ms", m.SessionTimeout)
	}
	if v, ok := os.LookupEnv(ShrinkBudgetEnv); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return m, fmt.Errorf("harness: %s=%q: not a number of checks", ShrinkBudgetEnv, v)
		}
		m.ShrinkBudget = n
	}
	switch {
	case m.ShrinkBudget == 0:
		m.ShrinkBudget = defaultShrinkBudget
	case m.ShrinkBudget < 0:
		m.ShrinkBudget = 0 // no bound
	}
	if m.LiveBound == 0 {
		m.LiveBound = 20 * m.SessionTimeout
	}
	if m.Client != Native && m.Client != GoZK {
		return m, fmt.Errorf("harness: unknown %v", m.Client)
	}
	if m.Faults == 0 {
		m.Faults = AllFaults
	}
	if m.Members < 2 {
		m.Faults &^= ensembleOnly() // a standalone server has no members to strike
	}
	if m.Client == GoZK {
		m.Faults &^= nativeOnly() // FailAuth: go-zookeeper has no auth-failed state to model
		if m.Renewing {
			return m, fmt.Errorf("harness: Machine.Renewing is for Native clients (go-zookeeper renews sessions itself)")
		}
	}
	seen := map[string]bool{}
	for _, inv := range append(append([]Invariant[P]{}, m.Invariants...), m.Eventually...) {
		if inv.Name == "" || inv.Check == nil {
			return m, fmt.Errorf("harness: an invariant without a name or a check")
		}
		if seen[inv.Name] {
			return m, fmt.Errorf("harness: two invariants named %q", inv.Name)
		}
		seen[inv.Name] = true
	}
	for name := range m.Ops {
		if reservedAction(name) {
			return m, fmt.Errorf("harness: op %q has the name of a harness action", name)
		}
	}
	return m, nil
}

// opNames returns the names of m's operations, sorted.
func (m *Machine[P]) opNames() []string {
	names := make([]string, 0, len(m.Ops))
	for n := range m.Ops {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Check explores m with rapid under t: every check runs a fresh simulated
// World in a testing/synctest bubble of its own, with rapid's flags
// (-rapid.checks, -rapid.seed, -rapid.steps, ...). A violation fails t
// with rapid's report: the violated invariants, the seed and fail file
// that replay the run, the shrunk schedule and its trace. Check logs the
// totals of the checks and their coverage table. t must not be parallel
// (the checks make crypto/rand deterministic for the test).
func Check[P any](t *testing.T, m Machine[P]) {
	t.Helper()
	r := newRunner(t, m)
	r.check(t)
}

// Property returns m's property for rapid, for a test that drives rapid
// itself. Each check must run in a synctest bubble of t: call it through
// rapid.SyncTest (as Check does), never inside one that is already running.
func Property[P any](t *testing.T, m Machine[P]) func(*rapid.T) {
	t.Helper()
	r := newRunner(t, m)
	return r.property
}

// reservedAction reports whether name is taken by an action of the
// harness's own.
func reservedAction(name string) bool {
	switch name {
	case "", "Step", "Settle", "Advance":
		return true
	}
	for _, r := range faultTable {
		if r.Explore.Name == name || (r.Explore.End.Name != "" && r.Explore.End.Name == name) {
			return true
		}
	}
	return false
}
