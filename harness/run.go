package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/cryptotest"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// runner runs the checks of one machine and keeps their totals.
type runner[P any] struct {
	m      Machine[P]
	parent *testing.T
	err    error // from withDefaults: every check fails with it

	mu    sync.Mutex
	stats Stats
	cover sim.Coverage
	sink  func(trace string) // receives the trace of every check, if set

	// replaying: the checks are a replay's (replayProperty).
	replaying bool

	// The shrink, counted in checks (see prop).
	budget int        // checks after the first failure; 0: no bound
	target string     // the message of the first failure
	runs   int        // checks since the first failure
	again  bool       // the last check failed as the first did, and was not itself a second run: rapid runs it again
	second bool       // the check under way is that second run: it runs even past the budget
	last   *runRecord // the check that ended last
	best   *runRecord // the last check that failed as the first did
}

// runRecord is what one check did, for the report of a failure.
type runRecord struct {
	actions []string // the actions it took, in order
	failure []string // its violations, processes and trace, as logged
}

func newRunner[P any](t *testing.T, m Machine[P]) *runner[P] {
	m, err := m.withDefaults()
	return &runner[P]{m: m, parent: t, err: err, cover: sim.Coverage{}, budget: m.ShrinkBudget}
}

// Stats counts what the checks of a machine did.
type Stats struct {
	Checks, Actions, Steps int
	Virtual                time.Duration
}

// property is one check of the machine, in a synctest bubble of its own.
func (r *runner[P]) property(t *rapid.T) { inBubble(r.parent, r.check1, nil, nil)(t) }

// prop is the property of an exploration: one check in a bubble of its
// own, failures rewritten by normalize (if set), and the shrink bounded by
// a number of checks rather than by wall-clock time. rapid shrinks a
// failure by trying smaller schedules, each a check, in an order that
// depends on the failure alone; once budget checks have run since the
// first failure, every further check passes at once without drawing, so
// rapid's shrinker stops where it got to. The shrunk schedule is then a
// function of the seed, whatever the machine's speed. rapid's own replay
// of the minimal run comes after the budget, so the harness keeps that
// run's record itself (best): every check that fails as the first did is
// one rapid keeps as its smallest so far. rapid runs a smaller schedule
// that failed as the first did a second time, to record it, and takes a
// pass then for a flaky test: so the check after such a failure runs
// even past the budget (the budget's last check may be the first run),
// and is itself no first run, whatever it gives. (The harness once took
// a second run within the budget for a first one: the next schedule
// rapid tried, past the budget, ran as a second run, failed, and its own
// second run passed at once, a flaky test.)
func (r *runner[P]) prop(normalize func(string) string) func(*rapid.T) {
	bubble := inBubble(r.parent, r.check1, normalize, r.ended)
	return func(t *rapid.T) {
		r.mu.Lock()
		over := r.target != "" && r.budget > 0 && r.runs >= r.budget
		r.second = r.again
		spent := over && !r.second
		if r.target != "" && !spent {
			r.runs++ // the checks run, not those passed at once
		}
		r.again = false
		r.mu.Unlock()
		if !spent {
			bubble(t)
		}
	}
}

// ended is told how each check of prop ended.
func (r *runner[P]) ended(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if msg == "" {
		return
	}
	if r.target == "" {
		r.target = msg
	}
	if msg == r.target {
		r.best = r.last
		r.again = !r.second // a second run is not run a third time
	}
}

// minimal returns the record of the smallest failing check, nil if none
// failed.
func (r *runner[P]) minimal() *runRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.best
}

// check1 is one check; it runs inside a bubble.
func (r *runner[P]) check1(t *rapid.T) {
	if r.err != nil {
		t.Fatalf("%v", r.err)
	}
	if testing.Testing() && !r.m.Parallel { // cryptotest refuses a non-test binary, and parallel tests
		cryptotest.SetGlobalRandom(r.parent, 1)
	}
	w := r.newWorld(t)
	defer w.shutdown()
	defer func() {
		r.mu.Lock()
		r.last = &runRecord{actions: w.actions, failure: w.failLog}
		r.mu.Unlock()
	}()
	defer func() {
		w.flushNotes()
		r.mu.Lock()
		sink := r.sink
		r.mu.Unlock()
		if sink != nil {
			sink(w.sw.TraceString())
		}
	}()
	w.run(t, r)
}

// check runs the machine's checks with rapid under t and logs the totals
// and the coverage table, and, on failure, rapid's report and the minimal
// failing run.
func (r *runner[P]) check(t *testing.T) {
	t.Helper()
	defer shrinkByBudget(t)()
	rec := &recorder{name: t.Name()}
	rapid.Check(rec, r.prop(nil))
	for _, l := range rec.logs {
		t.Log(l)
	}
	r.logTotals(t)
	if rec.Failed() {
		if best := r.minimal(); best != nil {
			t.Logf("minimal failing run (%d actions: %s):\n%s", len(best.actions), strings.Join(best.actions, ", "), strings.Join(best.failure, "\n"))
		}
		t.Error(strings.Join(rec.errs, "\n"))
	}
}

// logTotals logs what the checks did and the coverage table.
func (r *runner[P]) logTotals(tb rapid.TB) {
	r.mu.Lock()
	s, cover := r.stats, r.cover
	r.mu.Unlock()
	tb.Logf("%s: %d checks: %d actions, %d simulator steps, %v of virtual time", r.m.Name, s.Checks, s.Actions, s.Steps, s.Virtual)
	tb.Logf("%s: coverage: the requests of every check, by area and op, and the faults they met (a zero is a blind spot):\n%s", r.m.Name, cover)
}

// newWorld makes the World of one check from rapid's first draws: the
// seed of the calm stretches, the PCT depth, the sequence start, the
// fault mix, and which processes renew their sessions.
func (r *runner[P]) newWorld(t *rapid.T) *World[P] {
	m := &r.m
	rw := &runWorld{timeout: m.SessionTimeout, client: m.Client, replaying: r.replaying, beat: beatOf(t)}
	w := &World[P]{runWorld: rw}
	rw.sched.w = rw
	rw.ctx, rw.cancel = context.WithCancel(context.Background())
	seed := rapid.Uint64Range(0, 1<<20).Draw(t, "seed")
	depth := rapid.IntRange(0, 3).Draw(t, "pct depth")
	nearWrap := !m.NoWrap && rapid.Bool().Draw(t, "near wrap")
	rw.mix = drawMix(t, m.Faults)
	// Whether the calm stretches meet a swarm of faults drawn from the
	// seed: a draw of its own, which rapid turns off as it shrinks, so
	// that a shrunk schedule shows its faults as actions rather than
	// hiding them in the seed's stream.
	if rw.mix != 0 && rapid.Bool().Draw(t, "calm faults") {
		rw.sched.calm = faults.Swarm(faults.SwarmOptions{Intensity: calmIntensity})
		rw.sched.liveCalm = faults.Limit(liveFaults, rw.sched.calm)
	}
	native := 0
	if m.Client == Native {
		native = m.Processes
	}
	sw, err := sim.New(sim.Config{
		Seed:           seed,
		Clients:        native,
		Members:        m.Members,
		Server:         zkmem.Options{TickTime: m.SessionTimeout / 10},
		SessionTimeout: m.SessionTimeout,
		Policy:         &rw.sched,
		Choose:         rw.sched.choose,
		IdleTimeout:    m.LiveBound,
		PCT:            sim.PCT{Depth: depth, Steps: 300},
		NearWrap:       nearWrap,
		OnApply: func(client int, req *zkmem.Request) {
			if m.OnApply != nil {
				m.OnApply(w, client, req)
			}
		},
	})
	if err != nil {
		t.Fatalf("sim.New: %v", err)
	}
	rw.sw, rw.seed, rw.inOrder, rw.seeded = sw, seed, m.DrawsInOrder, true
	defer func() {
		// A failure (or rapid running out of data) before the check took
		// over the World: close it, and wait for what Init started.
		if p := recover(); p != nil {
			rw.shutdown()
			panic(p)
		}
	}()
	if sw.Members() > 1 {
		rw.isolated = make([]bool, sw.Members())
		sw.Note("harness: %s, %d %s processes, an ensemble of %d members, faults %v", m.Name, m.Processes, m.Client, sw.Members(), rw.mix)
	} else {
		sw.Note("harness: %s, %d %s processes, faults %v", m.Name, m.Processes, m.Client, rw.mix)
	}
	// On an ensemble the observer reads the committed state, whatever the
	// members do (a standalone server ignores the option).
	if rw.observer, err = sw.Server().Connect(zkmem.WithSessionTimeout(time.Hour), zkmem.WithCommittedView()); err != nil {
		t.Fatalf("connect observer: %v", err)
	}
	if m.Setup != nil {
		if err := m.Setup(rw.ctx, rw.observer); err != nil {
			t.Fatalf("Setup: %v", err)
		}
	}
	for i := range m.Processes {
		c := &proc{w: rw, idx: i, running: map[string]context.CancelFunc{}}
		switch {
		case m.Client == GoZK:
			zc, events, err := sw.ConnectZK(m.ZKOptions...)
			if err != nil {
				t.Fatalf("connect go-zookeeper client: %v", err)
			}
			c.zc, c.sess = zc, sw.NumClients()-1
			rw.wg.Add(1)
			go func() {
				defer rw.wg.Done()
				for range events {
				}
			}()
		default:
			c.sess = i
			if m.Renewing && rapid.Bool().Draw(t, fmt.Sprintf("p%d renewing", i)) {
				c.renewing = sw.Renewing(i)
				sw.Note("p%d: a Renewing client", i)
			}
		}
		rw.cores = append(rw.cores, c)
		w.procs = append(w.procs, &Process[P]{proc: c})
	}
	if m.Renewed != nil {
		rw.renewed = func(c *proc) { m.Renewed(w.procs[c.idx]) }
	}
	if m.Init != nil {
		m.Init(t, w)
	}
	for _, p := range w.procs {
		p.obj = m.New(p)
	}
	return w
}

// shutdown ends the check: operations are cancelled, the World closed
// (pending calls fail), and it waits for every goroutine it started.
func (w *runWorld) shutdown() {
	w.cancel()
	w.sw.Close()
	if w.observer != nil {
		_ = w.observer.Close()
	}
	w.wg.Wait()
}

// run is a whole check: rapid's actions, with the invariants checked after
// every simulator step and every action, then the liveness phase.
func (w *World[P]) run(t *rapid.T, r *runner[P]) {
	m := &r.m
	check := func() { w.checkInvariants(m.Invariants) }
	w.check = check
	actions := map[string]func(*rapid.T){
		"Step": func(t *rapid.T) {
			if w.sw.Enabled() == 0 {
				t.SkipNow() // nothing can happen without time passing
			}
			w.sched.drawing = true
			defer func() { w.sched.drawing = false }()
			w.step(t, check)
		},
		"Settle": func(t *rapid.T) {
			if w.sw.Enabled() == 0 {
				t.SkipNow()
			}
			w.settle(t, check)
		},
		"Advance": func(t *rapid.T) {
			d := rapid.SampledFrom([]time.Duration{w.timeout / 20, w.timeout * 2 / 5, w.timeout * 6 / 5, w.timeout * 5}).Draw(t, "duration")
			w.trace("advance %v", d)
			w.runFor(t, d, check, nil)
		},
	}
	// Every fault the machine allows is an action, those outside the
	// check's mix skipped: the set of actions, and so what each of rapid's
	// draws of an action means, stays the same when rapid turns a fault
	// off as it shrinks.
	for _, row := range faultTable {
		x := row.Explore
		if x.Make == nil || m.Faults&row.fault == 0 || m.Faults&NoFaults != 0 {
			continue
		}
		inMix := func(t *rapid.T) {
			if w.mix&row.fault == 0 {
				t.SkipNow()
			}
		}
		actions[x.Name] = func(t *rapid.T) { inMix(t); w.act(t, x.Action()) }
		if x.End.Name != "" {
			actions[x.End.Name] = func(t *rapid.T) { inMix(t); w.act(t, x.End) }
		}
	}
	if m.Actions != nil {
		for name, a := range m.Actions(w) {
			if _, ok := actions[name]; ok || m.Ops[name] != nil || name == "" {
				t.Fatalf("harness: action %q of Machine.Actions has the name of another", name)
			}
			actions[name] = a
		}
	}
	for _, name := range m.opNames() {
		op := m.Ops[name]
		actions[name] = func(t *rapid.T) {
			p := w.drawProc(t, w.eligible(faults.Awake))
			op(t, w.procs[p.idx])
		}
	}
	n := 0
	for name, a := range actions {
		actions[name] = func(t *rapid.T) {
			w.sched.t = t
			n++
			w.actions = append(w.actions, name)
			defer func() {
				if p := recover(); p != nil {
					if fmt.Sprintf("%T", p) == "rapid.invalidData" { // skipped: not taken
						w.actions = w.actions[:len(w.actions)-1]
					}
					panic(p)
				}
			}()
			w.reseed()
			a(t)
		}
	}
	actions[""] = func(t *rapid.T) {
		w.look(t, m)
		check()
		w.failOnViolations(t)
	}
	t.Repeat(actions)
	w.liveness(t, m, check)
	r.count(w, n)
}

// count adds a finished check to the totals, unless it is one of the
// shrink's (after the first failure).
func (r *runner[P]) count(w *World[P], actions int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.target != "" {
		return
	}
	r.stats.Checks++
	r.stats.Actions += actions
	r.stats.Steps += w.sw.Steps()
	r.stats.Virtual += w.sw.Now()
	r.cover.Add(w.sw.Coverage())
}

// checkInvariants records the violations of invs.
func (w *World[P]) checkInvariants(invs []Invariant[P]) {
	for _, inv := range invs {
		if err := inv.Check(w); err != nil {
			w.violate(Violation{Invariant: inv.Name, Detail: err.Error(), At: w.sw.Now()})
		}
	}
}

// look waits until every client is blocked, puts what they did in the
// trace, and gives a Native process whose session ended (and which runs
// nothing and is not paused) a new client and a new object.
func (w *World[P]) look(t *rapid.T, m *Machine[P]) {
	w.sw.Enabled()
	w.flushNotes()
	w.follow()
	for _, p := range w.procs {
		if p.zc != nil || p.Busy("") || p.Paused() {
			continue
		}
		st := w.sw.Conn(p.sess).State()
		ended := st == zksim.StateExpired || st == zksim.StateClosed || st == zksim.StateAuthFailed
		if p.renewing != nil && (st == zksim.StateClosed || st == zksim.StateAuthFailed) {
			p.renewing = nil // the library was closed or failed for good
		}
		if p.renewing == nil && ended {
			conn, err := w.sw.Connect()
			if err != nil && w.sw.Members() > 1 && errors.Is(err, zksim.ErrConnectionLoss) {
				continue // no member takes a new session now (an election): at a later look
			}
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			p.sess, p.partitioned = conn.Index(), false
			p.gen++
			w.trace("p%d new session c%d", p.idx, p.sess)
			p.obj = m.New(p)
		}
	}
}

// failOnViolations fails the check if a violation was found.
func (w *World[P]) failOnViolations(t *rapid.T) {
	w.mu.Lock()
	vs := append([]Violation(nil), w.violations...)
	w.mu.Unlock()
	if len(vs) > 0 {
		w.fail(t, vs)
	}
}

// fail logs the violations, where each process is, and the trace of the
// run, and fails the check with the names of the invariants broken only.
func (w *runWorld) fail(t *rapid.T, vs []Violation) {
	w.flushNotes()
	for _, v := range vs {
		w.failLog = append(w.failLog, fmt.Sprintf("VIOLATION: %v", v))
	}
	w.failLog = append(w.failLog, "processes: "+w.describe(),
		"trace of the run (simulator steps, virtual time):\n  "+strings.Join(w.sw.Trace(), "\n  "))
	for _, l := range w.failLog {
		t.Logf("%s", l)
	}
	if w.replaying {
		panic(replayFailure(failMessage(vs)))
	}
	t.Fatalf("%s", failMessage(vs))
}

// liveness stops the faults (paused processes resume, partitions heal,
// the server is fast again), lets the processes run and time pass, and
// fails unless every Eventually condition holds within LiveBound.
func (w *World[P]) liveness(t *rapid.T, m *Machine[P], check func()) {
	w.mu.Lock()
	w.live = true
	w.mu.Unlock()
	w.sched.t = nil
	w.sw.Faults().SlowServer(0, 0)
	for _, p := range w.procs {
		if p.Paused() {
			_ = w.sw.Faults().Resume(p.sess)
		}
		if p.partitioned {
			p.partitioned = false
			_ = w.sw.Faults().Reconnect(p.sess)
		}
	}
	w.trace("faults stop")
	w.reseed()
	begin, steps := w.sw.Now(), w.sw.Steps()
	tick := m.SessionTimeout / 4
	for {
		w.restoreMembers(t)
		w.look(t, m)
		if m.Liveness != nil {
			for _, p := range w.procs {
				m.Liveness(p)
			}
		}
		check()
		w.failOnViolations(t)
		var pending []string
		for _, inv := range m.Eventually {
			if err := inv.Check(w); err != nil {
				pending = append(pending, inv.Name+": "+err.Error())
			}
		}
		if len(pending) == 0 {
			// An Eventually condition, or a process, may have found a
			// violation as the goal was reached (items lost, say).
			w.failOnViolations(t)
			return
		}
		over := w.sw.Now()-begin > m.LiveBound
		if n := w.sw.Steps() - steps; n > liveStepLimit || over {
			w.violate(Violation{Invariant: "liveness", At: w.sw.Now(), Detail: fmt.Sprintf(
				"%v of virtual time and %d steps after faults stopped, still: %s", w.sw.Now()-begin, n, strings.Join(pending, "; "))})
			w.failOnViolations(t)
		}
		w.runFor(t, tick, check, nil)
	}
}
