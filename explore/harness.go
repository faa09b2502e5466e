package explore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The recipe machines run on the simulator (package sim): every client
// is a sim client, so each request, each reply, each watch event and each
// change of connection state is a step of the simulator's scheduler, and
// virtual time passes only when the scheduler lets it. The machine takes
// the scheduler's choices and the faults from rapid's draws (see
// schedule.go), so a schedule is made of rapid draws only: that is
// what makes a failure replayable from its seed, and its shrunk form
// meaningful.

// family is one recipe family's part of a machine: its client operations,
// its invariants and its liveness goal. The world (below) adds the faults,
// the scheduling and the passing of time.
type family interface {
	// actions returns the family's client operations, keyed by name.
	actions() map[string]func(*rapid.T)
	// renew is called when client c got a new session (its old one
	// expired or was closed); the family makes new recipe values for it.
	renew(c *client)
	// check records in w the violations of the family's invariants.
	check()
	// live starts what the clients must still do in the liveness phase
	// and reports whether every one of them has made the progress the
	// family promises.
	live() bool
	// stuck describes, for a liveness failure, who did not progress.
	stuck() string
}

// worldConfig sets a machine's size and fault catalogue.
type worldConfig struct {
	clients int
	faults  bool // the whole catalogue; false: scheduling and time only
	// authFail adds the FailAuth action (authfail.go): the recipe
	// machines draw it; the flawed recipes' machines, whose flaws are
	// caught from a fixed seed, do not.
	authFail bool
}

const (
	sessionTimeout = time.Second
	// liveBound is the virtual time the clients have, once faults stop,
	// to make the progress their family promises.
	liveBound = 20 * time.Second
	// liveTick is how much virtual time the liveness phase lets pass
	// between two looks at the family's progress.
	liveTick = 250 * time.Millisecond
	// settleLimit bounds the steps one Settle action takes.
	settleLimit = 400
	// liveStepLimit bounds the steps taken in the liveness phase.
	liveStepLimit = 20000
	// runStepLimit bounds the steps one stretch of running time takes (an
	// Advance action, a tick of the liveness phase): more is a livelock, a
	// client that sends request after request without waiting on time (a
	// consumer spinning on getChildren, say), which would otherwise keep
	// the check from ever ending. The recipe machines took at most 371
	// steps in a stretch (the committed seed and three random ones, 1,000
	// checks of each machine, 2026-11-26); the bound is over 5 times that.
	// It is no higher because a livelocked check costs time that grows
	// with the bound (often its square: each step's invariants read a
	// directory the livelock keeps filling), and rapid tries many such
	// checks while it shrinks: a mutant whose Parse refused every name
	// took 187 s to shrink with a bound of 5,000, 32 s with 2,000.
	runStepLimit = 2000
	// calmIntensity is the intensity of the swarm of faults the calm
	// stretches meet (faults.SwarmOptions.Intensity).
	calmIntensity = 0.1
	// liveFaults is how many step faults, and how many request faults, the
	// liveness phase still meets from the swarm: the clients must progress
	// despite them.
	liveFaults = 2
)

// world is one run of a machine: a simulated world of clients over one
// zkmem server, what the clients run, and what the invariants found.
type world struct {
	cfg      worldConfig
	sw       *sim.World
	ctx      context.Context
	cancel   context.CancelFunc
	observer *zkmem.Conn // not scheduled: the machine's own eyes on the tree
	clients  []*client
	wg       sync.WaitGroup
	spinCounters
	fam family
	res *resource
	// onApply are told of every request the server applies, as the
	// family is (applyObserver), by parts of a family that watch.
	onApply []func(c *client, r *zkmem.Request)
	sched   scheduler // who takes the scheduler's decisions (schedule.go)

	mu         sync.Mutex
	violations []violation
	notes      []*note // what client goroutines did, not yet in the trace
	noteSeq    int
	live       bool // in the liveness phase
	// rec is the record of the run of checks this one is part of (nil:
	// none); the machine goroutine sets it once.
	rec *record
}

// client is one client process of the machine. Its session is a sim
// client; when the session ends, the process gets a new one (a new sim
// client), as an application would. The trace calls the processes p0,
// p1, ... and the simulator's sessions c0, c1, ...
type client struct {
	w           *world
	idx         int
	conn        *sim.Conn
	partitioned bool // disconnected by a Partition action
	// acquisitions counts the holds the test-code recipes made for this
	// client (their GUIDs use it); touched by the machine goroutine only.
	acquisitions int
	// timed, if set, is the Conn the machine's recipes use for conn: it
	// checks their retry timing (retrycheck.go).
	timed *timedConn
	// renewing, if set, is the client library of the process: a
	// sim.Renewing that replaces an expired session at once (follow
	// keeps conn its current session).
	renewing *sim.Renewing
	// renewedFrom: the sessions its Renewing ran on before conn (follow
	// adds them), whose requests may still be on their way.
	renewedFrom []*sim.Conn
	// startedOn: the session (client index) each running operation began
	// on, by name.
	startedOn map[string]int
	// lateWatchEnd: its Renewing's watches learn that they ended with an
	// expired session only once it renewed the session (timedConn.lateEnd).
	lateWatchEnd bool

	mu      sync.Mutex
	running map[string]context.CancelFunc // operations in flight, by name
	// authStruck: operations under way when their client was armed to
	// fail authentication (authfail.go), with that client's index.
	authStruck map[string]int
}

// note is a line for the trace from a client goroutine: the machine puts
// it in the simulator's trace at its next look, ordered by virtual time,
// then client, then text, so that the trace does not depend on goroutine
// timing.
type note struct {
	at     time.Duration
	client int
	seq    int
	text   string
}

func newWorld(t *rapid.T, cfg worldConfig) *world {
	w := &world{cfg: cfg}
	w.sched.w = w
	w.ctx, w.cancel = context.WithCancel(context.Background())
	// The calm stretches (Settle, Advance, liveness) interleave clients
	// from this seed, uniformly or by PCT priorities; it is a draw like
	// every other. With faults, they meet the faults of a swarm drawn from
	// it (see schedule_test.go); and sequence numbers may start next to
	// the int32 wrap.
	seed := rapid.Uint64Range(0, 1<<20).Draw(t, "seed")
	depth := rapid.IntRange(0, 3).Draw(t, "pct depth")
	nearWrap := rapid.Bool().Draw(t, "near wrap")
	if cfg.faults {
		w.sched.calm = faults.Swarm(faults.SwarmOptions{Intensity: calmIntensity})
		w.sched.liveCalm = faults.Limit(liveFaults, w.sched.calm)
	}
	sw, err := sim.New(sim.Config{
		Seed:           seed,
		Clients:        cfg.clients,
		Server:         zkmem.Options{TickTime: 100 * time.Millisecond},
		SessionTimeout: sessionTimeout,
		Policy:         &w.sched,
		Choose:         w.sched.choose,
		IdleTimeout:    liveBound,
		PCT:            sim.PCT{Depth: depth, Steps: 300},
		OnApply:        w.applied,
		NearWrap:       nearWrap,
	})
	if err != nil {
		t.Fatalf("sim.New: %v", err)
	}
	w.sw = sw
	if w.observer, err = sw.Server().Connect(zkmem.WithSessionTimeout(time.Hour)); err != nil {
		t.Fatalf("connect observer: %v", err)
	}
	for i := range cfg.clients {
		w.clients = append(w.clients, &client{w: w, idx: i, conn: sw.Conn(i), running: map[string]context.CancelFunc{}})
	}
	return w
}

// applyObserver is a family that wants to know of every request the server
// applies (see sim.Config.OnApply).
type applyObserver interface {
	applied(c *client, r *zkmem.Request)
}

// applied passes a request the server applied to the family, with the
// process whose session sent it.
func (w *world) applied(session int, r *zkmem.Request) {
	for _, c := range w.clients {
		if c.conn.Index() == session {
			w.checkNames(c, r)
			for _, h := range w.onApply {
				h(c, r)
			}
			if o, ok := w.fam.(applyObserver); ok {
				o.applied(c, r)
			}
			return
		}
	}
}

// shutdown ends the run: every operation is cancelled, the World closed
// (pending calls fail), and it waits for every goroutine it started.
func (w *world) shutdown() {
	w.endRun()
	w.cancel()
	w.sw.Close()
	_ = w.observer.Close()
	w.wg.Wait()
}

// isLive reports whether the liveness phase has begun.
func (w *world) isLive() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.live
}

// trace records a line of the machine's own in the simulator's trace. Call
// it from the machine goroutine; client goroutines use client.note.
func (w *world) trace(format string, args ...any) {
	w.flushNotes()
	w.sw.Note(format, args...)
}

// note records a line from c's goroutine, for the trace.
func (c *client) note(format string, args ...any) {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.noteSeq++
	w.notes = append(w.notes, &note{at: w.sw.Now(), client: c.idx, seq: w.noteSeq, text: fmt.Sprintf(format, args...)})
}

// flushNotes puts the client goroutines' notes in the trace, by virtual
// time, then client, then text: two goroutines of one process (an acquire
// and a write) may note at the same virtual instant in either order, so
// the order they wrote in is only the last resort.
func (w *world) flushNotes() {
	w.mu.Lock()
	notes := w.notes
	w.notes = nil
	w.mu.Unlock()
	slices.SortFunc(notes, func(a, b *note) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.client, b.client), strings.Compare(a.text, b.text), cmp.Compare(a.seq, b.seq))
	})
	for _, n := range notes {
		w.sw.Note("[%v] p%d %s", n.at, n.client, n.text)
	}
}

// start runs op for c in a goroutine under name, unless an operation of
// that name is running. It reports whether it started.
func (c *client) start(name string, op func(ctx context.Context) error) bool {
	c.mu.Lock()
	if _, ok := c.running[name]; ok {
		c.mu.Unlock()
		return false
	}
	ctx, cancel := context.WithCancel(c.w.ctx)
	c.running[name] = cancel
	if c.startedOn == nil {
		c.startedOn = map[string]int{}
	}
	c.startedOn[name] = c.conn.Index()
	c.w.wg.Add(1)
	c.w.trace("p%d %s (session c%d)", c.idx, name, c.conn.Index())
	go func() {
		defer c.w.wg.Done()
		defer cancel()
		err := op(ctx)
		c.note("%s returned %v", name, err)
		c.mu.Lock()
		delete(c.running, name)
		session, struck := c.authStruck[name]
		delete(c.authStruck, name)
		c.mu.Unlock()
		if struck {
			c.w.checkAuthOutcome(c, name, session, err)
		}
	}()
	c.mu.Unlock()
	// Let the operation run until it waits on the World (or returns)
	// before the machine goes on, as sim.World.Go does: what the machine
	// checks next must not depend on how far the Go scheduler has taken
	// the new goroutine (a hold's state read while its Lock was still
	// running made TestLockMutex fail once in three runs under -race, a
	// failure rapid could not replay).
	synctest.Wait()
	return true
}

// busy reports whether c runs an operation called name ("" for any).
func (c *client) busy(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name == "" {
		return len(c.running) > 0
	}
	_, ok := c.running[name]
	return ok
}

// stop cancels c's operation called name.
func (c *client) stop(name string) {
	c.w.trace("p%d cancel %s", c.idx, name)
	c.mu.Lock()
	cancel, ok := c.running[name]
	c.mu.Unlock()
	if ok {
		cancel()
		// Let the operation take the cancellation in (and note that it
		// returned, if it does) before the machine writes to the trace
		// again: the trace must not depend on goroutine timing.
		synctest.Wait()
	}
}

// paused reports whether c's process is paused (a Pause action, not yet
// resumed). Call it from the machine goroutine.
func (c *client) paused() bool { return c.w.sw.Paused(c.conn.Index()) }

// sessionLive reports whether the server still has c's session.
func (w *world) sessionLive(c *client) bool {
	return slices.Contains(w.sw.Server().SessionIDs(), c.conn.SessionID())
}

// owners maps the session ids of live sessions to their clients.
func (w *world) owners() map[int64]*client {
	live := w.sw.Server().SessionIDs()
	out := map[int64]*client{}
	for _, c := range w.clients {
		if slices.Contains(live, c.conn.SessionID()) {
			out[c.conn.SessionID()] = c
		}
	}
	return out
}

// children lists dir with the observer; a missing dir has none.
func (w *world) children(dir string) []string {
	names, _, err := w.observer.Children(w.ctx, dir)
	if err != nil {
		return nil
	}
	slices.Sort(names)
	return names
}

// owner returns the EphemeralOwner of p, 0 if p is missing.
func (w *world) owner(p string) int64 {
	ok, st, err := w.observer.Exists(w.ctx, p)
	if err != nil || !ok {
		return 0
	}
	return st.EphemeralOwner
}

// awake returns the clients that are not paused; a paused process runs
// nothing.
func (w *world) awake() []*client {
	var out []*client
	for _, c := range w.clients {
		if !c.paused() {
			out = append(out, c)
		}
	}
	return out
}

// inFlight reports whether c has something on its way: a request the
// server has not applied, or news from the server not yet delivered. A
// client with nothing in flight has heard all the server has to say.
func (w *world) inFlight(c *client) bool { return w.sw.InFlight(c.conn.Index()) }

// inFlightAny reports whether a request of c's process is on its way on any
// session: its current one, or one its Renewing ran on before (a call that
// began there may still wait for a request it sent on it).
func (w *world) inFlightAny(c *client) bool {
	if w.inFlight(c) {
		return true
	}
	for _, old := range c.renewedFrom {
		if w.sw.InFlight(old.Index()) {
			return true
		}
	}
	return false
}

// run is a whole machine run: random actions, with the invariants checked
// after every simulator step and after every action, then the liveness
// phase.
func (w *world) run(t *rapid.T, fam family) {
	w.fam = fam
	actions := w.worldActions()
	for name, a := range fam.actions() {
		actions[name] = a
	}
	n := 0
	for name, a := range actions {
		actions[name] = func(t *rapid.T) {
			w.sched.t = t
			n++
			a(t)
		}
	}
	actions[""] = func(t *rapid.T) {
		w.look(t)
		w.fam.check()
		w.failOnViolations(t)
	}
	t.Repeat(actions)
	w.liveness(t)
	w.count(n)
}

// liveness stops the faults (paused clients resume, partitions heal, the
// server is fast again), lets the clients run and time pass, and fails
// unless they all progress within liveBound of virtual time.
func (w *world) liveness(t *rapid.T) {
	w.mu.Lock()
	w.live = true
	w.mu.Unlock()
	w.sched.t = nil
	w.sw.Faults().SlowServer(0, 0)
	for _, c := range w.clients {
		if c.paused() {
			_ = w.sw.Faults().Resume(c.conn.Index())
		}
		if c.partitioned {
			c.partitioned = false
			_ = w.sw.Faults().Reconnect(c.conn.Index())
		}
	}
	w.trace("faults stop")
	begin, steps := w.sw.Now(), w.sw.Steps()
	for {
		w.look(t)
		w.fam.check()
		w.failOnViolations(t)
		if w.fam.live() {
			// live may find a violation as it concludes (lost items).
			w.failOnViolations(t)
			return
		}
		if n := w.sw.Steps() - steps; n > liveStepLimit {
			t.Logf("VIOLATION: liveness: no end after %d steps once faults stopped: %s", n, w.fam.stuck())
			w.fail(t, "liveness")
		}
		if w.sw.Now()-begin > liveBound {
			t.Logf("VIOLATION: liveness: no progress within %v of virtual time once faults stopped: %s", liveBound, w.fam.stuck())
			w.fail(t, "liveness")
		}
		w.runFor(t, liveTick)
	}
}

// machine returns the property of one machine: a world of cfg with the
// family newFamily makes. It must run inside a testing/synctest bubble, so
// that time is virtual: checkMachine gives each check its own bubble with
// rapid.SyncTest, expectCaught with harness.InBubbles.
//
// A check is a function of its seed alone, whatever else runs in the
// process: every draw comes from rapid or from the World's seed. The
// recipes draw their GUIDs from their simulated client's own stream
// (sim.Conn.RandReader), and the server's session secret comes from the
// World's seed too, so nothing reads crypto/rand's global source; which is
// why the machine does not set it (testing/cryptotest.SetGlobalRandom,
// which forbids parallel tests), and why the machines of different tests,
// or of the workers of `zksim explore -parallel`, can run at once
// (TestDeterminism compares the traces of separate processes, which would
// differ if a check drew from crypto/rand). The counts and the trace
// digest of a check go to the run parent hosts (see runChecks), if any.
func machine(parent *testing.T, cfg worldConfig, newFamily func(*world, *rapid.T) family) func(*rapid.T) {
	return func(t *rapid.T) {
		w := newWorld(t, cfg)
		w.rec = recordOf(parent)
		defer w.shutdown()
		sink := traceSink
		if sink != nil || (w.rec != nil && w.rec.digest != nil) {
			defer func() {
				w.flushNotes()
				trace := w.sw.TraceString()
				if sink != nil {
					sink(trace)
				}
				w.rec.addTrace(trace)
			}()
		}
		w.run(t, newFamily(w, t))
	}
}

// traceSink, if set, receives the whole trace of every check as it ends
// (determinism_test.go). Set it only while no property runs.
var traceSink func(trace string)

// checkMachine checks a machine with rapid, each check in its own synctest
// bubble; started, if set, is called as each check starts.
func checkMachine(parent *testing.T, cfg worldConfig, newFamily func(*world, *rapid.T) family, started func()) {
	parent.Helper()
	runChecks(parent, parent, false, func(t *rapid.T) {
		if started != nil {
			started()
		}
		defer watchdog().Stop()
		rapid.SyncTest(t, machine(parent, cfg, newFamily))
	})
}

// hangAfter is how long, in wall-clock time, one check may run before the
// watchdog takes it for hung: a check takes milliseconds, so this only
// catches a deadlock that no virtual time can end (goroutines blocked on
// a sync.Mutex, which synctest does not see as durably blocked, or a loop
// that never blocks), which would otherwise hang the test binary until
// go test's -timeout.
const hangAfter = 20 * time.Second

// watchdog crashes the test binary, with every goroutine's stack, if the
// check under way runs for hangAfter. Stop it when the check ends.
func watchdog() *time.Timer {
	return time.AfterFunc(hangAfter, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		panic(fmt.Sprintf("explore: a check has run for %v of wall-clock time: hung (goroutines below)\n%s", hangAfter, buf))
	})
}

// runChecks checks prop with rapid, reporting to tb, and logs to tb what
// the checks did; it returns the counts, and the digest of the traces of
// every check in turn if digest is set. host is the parent *testing.T that
// prop's checks were made with (machine's parent): their counts go to this
// run alone, so that runs of different hosts may go on at once.
func runChecks(tb rapid.TB, host *testing.T, digest bool, prop func(*rapid.T)) (stats, string) {
	tb.Helper()
	rec := &record{cover: sim.Coverage{}}
	if digest {
		rec.digest = sha256.New()
	}
	recordsMu.Lock()
	if records[host] != nil {
		recordsMu.Unlock()
		panic("explore: two runs of checks at once with the same parent test")
	}
	records[host] = rec
	recordsMu.Unlock()
	defer func() {
		recordsMu.Lock()
		delete(records, host)
		recordsMu.Unlock()
	}()
	rapid.Check(tb, prop)
	rec.mu.Lock()
	total, cover := rec.stats, rec.cover
	sum := ""
	if digest {
		sum = hex.EncodeToString(rec.digest.Sum(nil))
	}
	rec.mu.Unlock()
	tb.Logf("%d checks: %d actions, %d simulator steps, %v of virtual time", total.checks, total.actions, total.steps, total.virtual)
	tb.Logf("coverage: the requests of every check, by area and op, and the faults they met (a zero is a blind spot):\n%s", coverageLines(cover))
	return total, sum
}

// stats counts what the checks of one property did.
type stats struct {
	checks, actions, steps int
	virtual                time.Duration
}

// record is what the checks of one run of runChecks did: their counts,
// their coverage and (if asked) the digest of their traces.
type record struct {
	mu     sync.Mutex
	stats  stats
	cover  sim.Coverage
	digest hash.Hash // nil: no digest
}

// records are the runs of runChecks under way, by host test.
var (
	recordsMu sync.Mutex
	records   = map[*testing.T]*record{}
)

// recordOf returns the record of the run under way with host parent, nil
// if there is none (a property run by rapid.Check directly).
func recordOf(parent *testing.T) *record {
	recordsMu.Lock()
	defer recordsMu.Unlock()
	return records[parent]
}

// addTrace adds the trace of a check to r's digest: the digest of each
// trace, in the order the checks ran (rapid runs them one at a time).
func (r *record) addTrace(trace string) {
	if r == nil || r.digest == nil {
		return
	}
	sum := sha256.Sum256([]byte(trace))
	r.mu.Lock()
	defer r.mu.Unlock()
	r.digest.Write(sum[:])
}

// coverageLines prints a coverage table with every line marked
// "coverage| ", which the exploration command (cmd/zksim) picks out.
func coverageLines(c sim.Coverage) string {
	lines := strings.Split(strings.TrimRight(c.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = "coverage| " + l
	}
	return strings.Join(lines, "\n")
}

// count adds a finished run to the counts of its record.
func (w *world) count(actions int) {
	r := w.rec
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.checks++
	r.stats.actions += actions
	r.stats.steps += w.sw.Steps()
	r.stats.virtual += w.sw.Now()
	r.cover.Add(w.sw.Coverage())
}

// describeClients tells, for a failure, where each client is.
func (w *world) describeClients() string {
	var out []string
	for _, c := range w.clients {
		out = append(out, fmt.Sprintf("p%d: session c%d %v live=%v paused=%v in flight=%v", c.idx, c.conn.Index(), c.conn.State(), w.sessionLive(c), c.paused(), w.inFlight(c)))
	}
	return strings.Join(out, "; ")
}
