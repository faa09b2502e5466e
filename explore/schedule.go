package explore

import (
	"math/rand/v2"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The scheduling, fault and time actions every machine has. The simulator
// takes every decision of a Step action from rapid: which enabled event
// (a request reaching the server, a reply, a watch event or a change of
// state reaching a client) comes next, and the fate of a request (a lost
// reply, a dropped request, children listed in a shuffled order). The
// other faults of the catalogue are actions of their own. The calm
// stretches (Settle, Advance, the liveness phase) leave the choices to the
// World's seed, itself a draw (uniform, or PCT priorities of a drawn
// depth), and, in a machine with faults, meet the faults of a swarm drawn
// from that seed (faults.Swarm: a few kinds, often, some aimed at writes
// or multis); the liveness phase meets at most liveFaults of them.

// scheduler is the machine's sim.Policy and sim.Config.Choose: while a
// Step action runs (t set and drawing), decisions are rapid draws.
type scheduler struct {
	w        *world
	t        *rapid.T   // the running action's; nil in the liveness phase
	drawing  bool       // in a Step action: rapid decides
	calm     sim.Policy // the calm stretches' faults; nil without faults
	liveCalm sim.Policy // calm, limited, for the liveness phase
	// quiet: the calm stretches meet no fault for now (an action that
	// arranges an interleaving of its own, with faults of its choosing).
	quiet bool
}

var (
	_ sim.Policy  = (*scheduler)(nil)
	_ sim.Starter = (*scheduler)(nil)
)

func (s *scheduler) String() string {
	if s.calm == nil {
		return "rapid"
	}
	return "rapid; calm stretches: " + s.calm.String()
}

// Start implements sim.Starter: it draws the calm stretches' swarm.
func (s *scheduler) Start(w *sim.World) {
	if s.calm != nil {
		sim.StartPolicy(s.liveCalm, w)
	}
}

// current returns the policy of the calm stretch under way, nil in a Step
// action (whose faults are rapid's draws and actions).
func (s *scheduler) current() sim.Policy {
	switch {
	case s.drawing || s.calm == nil || s.quiet:
		return nil
	case s.w.isLive():
		return s.liveCalm
	}
	return s.calm
}

// Step injects, in a calm stretch, what the swarm draws.
func (s *scheduler) Step(w *sim.World, rng *rand.Rand) sim.Fault {
	if p := s.current(); p != nil {
		return p.Step(w, rng)
	}
	return nil
}

// choose picks the event of a Step action; elsewhere the seed does.
func (s *scheduler) choose(n int) int {
	if !s.drawing {
		return -1
	}
	return rapid.IntRange(0, n-1).Draw(s.t, "event")
}

// fateRows are the request faults of the catalogue that machines draw
// (faults.Catalog): a Step draws the fate of a request among them and
// noFate times none.
var fateRows = requestFaults()

// requestFates names the fates a Step draws for a request, most often
// none ("").
var requestFates = fateNames()

const noFate = 3

func requestFaults() []faults.Entry {
	var rows []faults.Entry
	for _, e := range faults.Catalog() {
		if !e.Step && e.Explore.Name != "" {
			rows = append(rows, e)
		}
	}
	return rows
}

func fateNames() []string {
	names := make([]string, noFate, noFate+len(fateRows))
	for _, e := range fateRows {
		names = append(names, e.Explore.Name)
	}
	return names
}

// Request draws the fate of a request admitted by a Step action.
func (s *scheduler) Request(w *sim.World, client int, r *zkmem.Request, rng *rand.Rand) sim.Fate {
	if p := s.current(); p != nil {
		return p.Request(w, client, r, rng)
	}
	if !s.drawing || !s.w.cfg.faults {
		return sim.Fate{}
	}
	return DrawFate(s.t, r)
}

// DrawFate draws from t the fate of request r as the machines' Step
// actions do: most often none, else one of the catalogue's request faults
// that machines draw (a lost reply, a dropped request or, for a
// getChildren, shuffled children). A machine of one's own that makes
// itself the World's policy draws its request fates with it.
func DrawFate(t *rapid.T, r *zkmem.Request) sim.Fate {
	name := rapid.SampledFrom(requestFates).Draw(t, "fate")
	for i := range fateRows {
		if fateRows[i].Explore.Name == name {
			return fateRows[i].Fate(r)
		}
	}
	return sim.Fate{}
}

// look waits until every client is blocked and puts what they did in the
// trace, then gives a client whose session ended, or whose authentication
// failed (and which has heard so, runs nothing and is not paused), a new
// session.
func (w *world) look(t *rapid.T) {
	w.sw.Enabled()
	w.flushNotes()
	w.follow()
	for _, c := range w.clients {
		st := c.conn.State()
		if c.renewing != nil && (st == zksim.StateClosed || st == zksim.StateAuthFailed) && !c.busy("") && !c.paused() {
			c.renewing = nil // the process closed its client library, or it failed for good: it makes a plain one
		}
		if c.renewing == nil && (st == zksim.StateExpired || st == zksim.StateClosed || st == zksim.StateAuthFailed) && !c.busy("") && !c.paused() {
			conn, err := w.sw.Connect()
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			c.conn, c.partitioned = conn, false
			w.trace("p%d new session c%d", c.idx, conn.Index())
			w.fam.renew(c)
		}
	}
}

// follow makes the current session of each Renewing client its conn, and
// tells the family, as soon as the Renewing renewed (at the step its client
// learnt of the expiry), even while an operation of the process runs: the
// operation goes on with the new session, as the library's user's does.
func (w *world) follow() {
	for _, c := range w.clients {
		if c.renewing == nil {
			continue
		}
		if cur := c.renewing.Current(); cur != c.conn {
			c.mu.Lock()
			c.renewedFrom = append(c.renewedFrom, c.conn)
			c.conn = cur
			c.mu.Unlock()
			c.partitioned = false
			w.trace("p%d renewed: session c%d", c.idx, cur.Index())
			w.fam.renew(c)
		}
	}
}

// session returns c's conn; goroutines of c's operations call it, since
// follow may change conn while they run.
func (c *client) session() *sim.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// step takes one step of the simulator, and checks the invariants once
// every client has taken in what the step told it. It returns how many
// events are enabled then.
func (w *world) step(t *rapid.T) int {
	if err := w.sw.Step(); err != nil {
		t.Fatalf("sim: %v", err)
	}
	enabled := w.sw.Enabled()
	w.follow()
	w.fam.check()
	w.flushNotes()
	return enabled
}

// settleSteps takes steps, with no fault and the seed's choices, until
// nothing is enabled (or settleLimit steps were taken, or a violation
// found): a stretch of calm in which no time passes.
func (w *world) settleSteps(t *rapid.T) {
	enabled := w.sw.Enabled()
	for i := 0; i < settleLimit && enabled > 0 && !w.violated(); i++ {
		enabled = w.step(t)
	}
}

// runFor lets d of virtual time pass, the World taking steps with the
// seed's choices and no fault, and checks the invariants after every step
// (it stops early when one is violated). It records a livelock and stops
// if the clients take more than runStepLimit steps before d has passed.
func (w *world) runFor(t *rapid.T, d time.Duration) {
	deadline, first := w.sw.Now()+d, w.sw.Steps()
	// The scheduler lets time run to its next timer; this one ends the
	// stretch on time.
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		time.Sleep(d)
		w.sw.Wake()
	}()
	err := w.sw.Run(func() bool {
		w.follow()
		w.fam.check()
		if n := w.sw.Steps() - first; n > runStepLimit {
			w.violate("livelock", "%d simulator steps without %v of virtual time passing: %s", n, d, w.describeClients())
		}
		return w.violated() || w.sw.Now() >= deadline
	})
	if err != nil {
		t.Fatalf("sim: %v", err)
	}
	w.flushNotes()
}

// expireMidCall expires the session of a Renewing client, drawn among
// those running the operation called name ("": any) with a request on its
// way, skipping the action when there is none.
func (w *world) expireMidCall(t *rapid.T, name string) {
	var calling []*client
	for _, c := range w.awake() {
		if c.renewing != nil && c.busy(name) && w.inFlight(c) {
			calling = append(calling, c)
		}
	}
	c := drawClient(t, calling, "expire")
	w.inject(t, faults.Expire(c.conn.Index()))
}

// drawClient draws one of cs, skipping the action when cs is empty.
func drawClient(t *rapid.T, cs []*client, what string) *client {
	if len(cs) == 0 {
		t.SkipNow() // no client can do what
	}
	return cs[rapid.IntRange(0, len(cs)-1).Draw(t, "client")]
}

// worldActions are the scheduling, fault and time actions every machine
// has.
func (w *world) worldActions() map[string]func(*rapid.T) {
	a := map[string]func(*rapid.T){
		// Step takes one step of the scheduler, rapid choosing the event
		// and the fate of a request.
		"Step": func(t *rapid.T) {
			if w.sw.Enabled() == 0 {
				t.SkipNow() // nothing can happen without time passing
			}
			w.sched.drawing = true
			defer func() { w.sched.drawing = false }()
			w.step(t)
		},
		// Settle takes every enabled event, with no fault, until nothing
		// is enabled: a stretch of calm.
		"Settle": func(t *rapid.T) {
			if w.sw.Enabled() == 0 {
				t.SkipNow()
			}
			w.settleSteps(t)
		},
		// Advance lets virtual time pass: timers fire (session expiry,
		// reconnects, backoffs), and the server stays prompt meanwhile.
		"Advance": func(t *rapid.T) {
			d := rapid.SampledFrom([]time.Duration{50 * time.Millisecond, 400 * time.Millisecond, sessionTimeout + 200*time.Millisecond}).Draw(t, "duration")
			w.trace("advance %v", d)
			w.runFor(t, d)
		},
	}
	if !w.cfg.faults {
		return a
	}
	// Each step fault of the catalogue that machines draw is an action
	// named after it (faults.Catalog; the faults' descriptions are
	// there): Partition, Expire, Pause, Delay, Slow. A fault that lasts
	// until an action ends it is one action here that toggles: Partition
	// heals a client it cut off, Pause resumes a paused one. FailAuth is
	// drawn while a call waits out a connection loss (authfail.go), by
	// the machines that check it.
	for _, e := range faults.Catalog() {
		x := e.Explore
		switch {
		case x.Make == nil:
		case e.Kind == faults.KindFailAuth:
			if w.cfg.authFail {
				a[x.Name] = w.failAuthMidCall
			}
		default:
			a[x.Name] = func(t *rapid.T) { w.act(t, x) }
		}
	}
	return a
}

// act takes the fault action x: it draws a client (none for a fault of
// the server) and strikes it with x's fault, or with the fault's end if
// the client is under it (a partitioned client heals, a paused one
// resumes); it skips the action when the client can do neither (a paused
// client cannot reconnect).
func (w *world) act(t *rapid.T, x faults.Explore) {
	a, idx := x.Action(), faults.AnyClient
	var c *client
	if x.Who != faults.Server {
		c = drawClient(t, w.clients, x.Name)
		idx = c.conn.Index()
		switch {
		case w.may(c, x.Who):
		case x.End.Name != "" && w.may(c, x.End.Who):
			a = x.End
		default:
			t.SkipNow()
		}
	}
	f := a.Make(explorer{t}, idx)
	switch a.Who {
	case faults.Connected:
		c.partitioned = true
	case faults.Disconnected:
		c.partitioned = false
	}
	w.inject(t, f)
}

// may reports whether c is one of who.
func (w *world) may(c *client, who faults.Who) bool {
	switch who {
	case faults.AnyProcess:
		return true
	case faults.Connected:
		return !c.partitioned
	case faults.Disconnected:
		return c.partitioned && !c.paused()
	case faults.Awake:
		return !c.paused()
	case faults.Paused:
		return c.paused()
	}
	return false
}

// explorer draws the parameters of a fault action (faults.Explorer).
type explorer struct{ t *rapid.T }

func (explorer) SessionTimeout() time.Duration { return sessionTimeout }

func (x explorer) Pick(what string, ds ...time.Duration) time.Duration {
	return rapid.SampledFrom(ds).Draw(x.t, what)
}

// inject injects f as a step of the simulator.
func (w *world) inject(t *rapid.T, f sim.Fault) {
	w.flushNotes()
	if err := w.sw.Inject(f); err != nil && err != sim.ErrGone {
		t.Fatalf("inject %v: %v", f, err)
	}
}
