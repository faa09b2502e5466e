package harness

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The scheduling and fault actions of every machine. A Step action hands
// every decision to rapid: which enabled event comes next (a request
// reaching the server, or the head of one client's queue of replies and
// events reaching it) and the fate of the request it admits. The calm
// stretches (Settle, Advance, the liveness phase) leave the choices to the
// World's seed, itself a draw (uniform, or PCT priorities of a drawn
// depth), and meet the faults of a swarm drawn from that seed, at most
// liveFaults of each kind in the liveness phase.

const (
	// settleLimit bounds the steps one Settle action takes.
	settleLimit = 400
	// runStepLimit bounds the steps one stretch of running time takes (an
	// Advance action, a tick of the liveness phase): more is a livelock,
	// a client that sends request after request without waiting on time.
	runStepLimit = 2000
	// liveStepLimit bounds the steps of the whole liveness phase.
	liveStepLimit = 20000
	// calmIntensity is the intensity of the calm stretches' swarm.
	calmIntensity = 0.1
	// liveFaults is how many step faults, and request faults, the liveness
	// phase still meets from the swarm.
	liveFaults = 2
)

// scheduler is the World's sim.Policy and sim.Config.Choose: while a Step
// action runs, decisions are rapid draws; in the calm stretches, the
// swarm's.
type scheduler struct {
	w        *runWorld
	t        *rapid.T   // the running action's; nil in the liveness phase
	drawing  bool       // in a Step action: rapid decides
	calm     sim.Policy // the calm stretches' faults; nil without faults
	liveCalm sim.Policy // calm, limited, for the liveness phase
	quiet    bool       // World.Quiet: the calm stretches meet no fault
	// panicked is a panic of a draw made inside a step of the simulator
	// (rapid out of data, as it shrinks), raised again once the step is
	// over (see draw).
	panicked any
}

// draw makes a rapid draw inside a step of the simulator. A panic there
// (rapid runs out of data while it shrinks, and ends the check so) would
// leave the World in the middle of the step, a request taken from its
// queue and in none (the check's end could not fail it, and its caller
// would wait for good): draw keeps the panic, the step goes on as if the
// seed decided, and step raises it again once the step is over.
func (s *scheduler) draw(f func()) (ok bool) {
	if s.panicked != nil {
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			s.panicked = p
			ok = false
		}
	}()
	f()
	return true
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
// action.
func (s *scheduler) current() sim.Policy {
	switch {
	case s.drawing || s.calm == nil || s.quiet:
		return nil
	case s.w.Live():
		return s.liveCalm
	}
	return s.calm
}

// Step injects, in a calm stretch, what the swarm draws.
func (s *scheduler) Step(w *sim.World, rng *rand.Rand) sim.StepFault {
	if p := s.current(); p != nil {
		return p.Step(w, rng)
	}
	return nil
}

// Request draws the fate of a request: rapid's in a Step action, the
// swarm's in a calm stretch.
func (s *scheduler) Request(w *sim.World, client int, r *zkmem.Request, rng *rand.Rand) sim.Fate {
	if p := s.current(); p != nil {
		return p.Request(w, client, r, rng)
	}
	if !s.drawing {
		return sim.Fate{}
	}
	var f sim.Fate
	s.draw(func() { f = drawFate(s.t, s.w.mix, r) })
	return f
}

// choose picks the event of a Step action; elsewhere the seed does. The
// draw picks an event by what it is (its kind and its session or member),
// not by its place among the enabled ones: the enabled event that ranks
// first under a hash of the draw and the event (rendezvous hashing). Each
// event is as likely as any other, and when rapid drops an action as it
// shrinks (a read that added an event of its own, say), a later Step picks
// the same event as before unless that event is gone, where a position
// would have shifted to another. (A World that draws in order, for the
// fail files recorded so, picks by position as it did then.)
func (s *scheduler) choose(cs []sim.Choice) int {
	if !s.drawing {
		return -1
	}
	i := -1
	s.draw(func() {
		if s.w.inOrder {
			i = rapid.IntRange(0, len(cs)-1).Draw(s.t, "event")
		} else {
			i = rendezvous(rapid.Uint64Range(0, 1<<16).Draw(s.t, "event"), cs)
		}
	})
	return i
}

// rendezvous returns the index of the choice that ranks first under v.
func rendezvous(v uint64, cs []sim.Choice) int {
	best, top := 0, uint64(0)
	for i, c := range cs {
		if h := mixSeeds(v, uint64(c.Kind)<<32|uint64(c.Index)); i == 0 || h > top {
			best, top = i, h
		}
	}
	return best
}

// reseed gives what follows (the rest of an action, the liveness phase)
// a stream of the World's seed of its own: the first time the World
// takes a step or a fault after it, its choices and fault draws restart
// from a draw mixed with the World's seed (ensureSeed). Without it the
// calm stretches drew from one stream in order, and an action rapid
// dropped as it shrank shifted every later stretch's choices: the
// shorter schedule failed no more, and shrinks stopped at dozens of
// actions. The draw waits for the first step because rapid tells an
// action skipped before any draw (another is drawn instead) from one
// skipped after one (it counts against the run, and ends it early).
func (w *runWorld) reseed() { w.seeded = w.inOrder }

// ensureSeed makes reseed's draw, once.
func (w *runWorld) ensureSeed(t *rapid.T) {
	if w.seeded {
		return
	}
	w.seeded = true
	d := rapid.Uint64Range(0, 1<<20).Draw(t, "stretch seed")
	w.sw.Reseed(mixSeeds(w.seed, d))
}

// mixSeeds combines two seeds into one (SplitMix64's finalizer over
// their combination), so that the same draw under two World seeds gives
// two unrelated streams.
func mixSeeds(seed, d uint64) uint64 {
	z := seed ^ (d+1)*0x9e37_79b9_7f4a_7c15
	z = (z ^ z>>30) * 0xbf58_476d_1ce4_e5b9
	z = (z ^ z>>27) * 0x94d0_49bb_1331_11eb
	return z ^ z>>31
}

// step takes one step of the simulator and checks the invariants once
// every client has taken in what the step told it; it returns how many
// events are enabled then.
func (w *runWorld) step(t *rapid.T, check func()) int {
	w.ensureSeed(t)
	err := w.sw.Step()
	if p := w.sched.panicked; p != nil {
		w.sched.panicked = nil
		panic(p)
	}
	if err != nil {
		t.Fatalf("sim: %v", err)
	}
	enabled := w.sw.Enabled()
	w.follow()
	check()
	w.flushNotes()
	return enabled
}

// settle takes steps with no fault and the seed's choices until nothing is
// enabled (or settleLimit steps were taken, or a violation found).
//
// On an ensemble it stops when only lagging members' applies are left: a
// lagging member stays behind until a Step, a stretch of time or a
// CatchUp brings it on, rather than at every Settle.
func (w *runWorld) settle(t *rapid.T, check func()) {
	enabled := w.sw.Enabled()
	for i := 0; i < settleLimit && enabled > w.memberApplies() && !w.violated(); i++ {
		enabled = w.step(t, check)
	}
}

// runFor lets d of virtual time pass, the World taking steps with the
// seed's choices, and checks the invariants after every step (it stops
// early when one is violated, or when stop, if set, reports true). It
// records a livelock if the clients take more than runStepLimit steps
// before d has passed.
func (w *runWorld) runFor(t *rapid.T, d time.Duration, check func(), stop func() bool) {
	w.ensureSeed(t)
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
		check()
		if n := w.sw.Steps() - first; n > runStepLimit {
			w.violate(Violation{Invariant: "livelock", At: w.sw.Now(),
				Detail: fmt.Sprintf("%d simulator steps without %v of virtual time passing: %s", n, d, w.describe())})
		}
		return w.violated() || w.sw.Now() >= deadline || (stop != nil && stop())
	})
	if err != nil {
		t.Fatalf("sim: %v", err)
	}
	w.flushNotes()
}

// inject injects f as a step of the simulator.
func (w *runWorld) inject(t *rapid.T, f sim.StepFault) {
	w.flushNotes()
	w.ensureSeed(t)
	if err := w.sw.Inject(f); err != nil && err != sim.ErrGone {
		t.Fatalf("inject %v: %v", f, err)
	}
}

// eligible returns the processes who stands for.
func (w *runWorld) eligible(who faults.Who) []*proc {
	var out []*proc
	for _, p := range w.cores {
		var ok bool
		switch who {
		case faults.AnyProcess:
			ok = true
		case faults.Connected:
			ok = !p.partitioned
		case faults.Disconnected:
			ok = p.partitioned && !p.Paused()
		case faults.Awake:
			ok = !p.Paused()
		case faults.Paused:
			ok = p.Paused()
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// drawProc draws a process, and skips the action unless it is one of ps;
// the schedule names the process after the action. The draw is among
// every process, not among ps, so that p1 stays p1 when rapid drops an
// earlier action that changed who is eligible (a Pause, say) as it
// shrinks.
func (w *runWorld) drawProc(t *rapid.T, ps []*proc) *proc {
	if len(ps) == 0 {
		t.SkipNow()
	}
	p := w.cores[rapid.IntRange(0, len(w.cores)-1).Draw(t, "process")]
	if !slices.Contains(ps, p) {
		t.SkipNow()
	}
	if n := len(w.actions); n > 0 {
		w.actions[n-1] += fmt.Sprintf(" p%d", p.idx)
	}
	return p
}

// act takes a fault action of the catalogue: it draws a process among
// a.Who (none for a fault of the server) and injects the fault a makes for
// its client. A Partition (a Connected fault) marks the process cut off,
// and a Heal (a Disconnected one) connected again. A fault and its end
// are two actions rather than one that toggles, so that rapid can drop
// either from a schedule as it shrinks without changing what the other
// does.
func (w *runWorld) act(t *rapid.T, a faults.Action) {
	if a.Who.Members() {
		w.actOnMember(t, a)
		return
	}
	var p *proc
	client := faults.AnyClient
	if a.Who != faults.Server {
		p = w.drawProc(t, w.eligible(a.Who))
		client = p.sess
	}
	f := a.Make(explorer{t: t, timeout: w.timeout}, client)
	switch a.Who {
	case faults.Connected:
		p.partitioned = true
	case faults.Disconnected:
		p.partitioned = false
	}
	w.inject(t, f)
}

// follow makes each Renewing process's session the one its library runs on
// now, as soon as it renewed. It runs after every step, and tells the
// check's watchdog.
func (w *runWorld) follow() {
	if w.beat != nil {
		w.beat()
	}
	for _, c := range w.cores {
		if c.renewing == nil {
			continue
		}
		if cur := c.renewing.Current(); cur.Index() != c.sess {
			c.sess = cur.Index()
			c.partitioned = false
			w.trace("p%d renewed: session c%d", c.idx, c.sess)
			if w.renewed != nil {
				w.renewed(c)
			}
		}
	}
}
