package sim

import (
	"math/rand/v2"
	"slices"
)

// PCT configures probabilistic concurrency testing (Burckhardt, Kothari,
// Musuvathi and Nagarakatte, "A Randomized Scheduler with Probabilistic
// Guarantees of Finding Bugs", ASPLOS 2010) for the choices the scheduler
// draws from the seed. Uniform choices make an interleaving that needs one
// client to run far ahead of another (or to stall at one precise point)
// exponentially rare; PCT finds a bug of depth d, one that needs d
// ordering constraints, with probability at least 1/(n k^(d-1)) per run,
// for n clients and k steps.
//
// Each session gets a random priority when it connects, and the enabled
// event of the session with the highest priority is taken (among its
// events, one drawn from the seed). At Depth-1 change points, steps drawn
// from the seed in [1, Steps], the session whose event is taken drops
// below every other: the scheduler switches from it to another at exactly
// that step.
type PCT struct {
	// Depth is the bug depth aimed at: Depth-1 priority change points. 0
	// turns PCT off (uniform choices); 1 runs the sessions by fixed random
	// priorities.
	Depth int
	// Steps is the range the change points are drawn in (default 1000):
	// about the number of steps of a run.
	Steps int
}

// pct is the scheduler's PCT state.
type pct struct {
	on      bool
	rng     *rand.Rand
	changes []int // steps at which the running session drops, ascending
	low     int   // the next priority a change point gives (falls)
}

func (p *pct) init(c PCT, seed uint64) {
	if c.Depth <= 0 {
		return
	}
	p.on = true
	p.rng = rand.New(rand.NewPCG(seed, 0x9c7_9c7))
	steps := c.Steps
	if steps <= 0 {
		steps = 1000
	}
	for range c.Depth - 1 {
		p.changes = append(p.changes, 1+p.rng.IntN(steps))
	}
	slices.Sort(p.changes)
}

// priority returns a new session's priority: above every change point's.
func (p *pct) priority() int64 {
	if !p.on {
		return 0
	}
	return 1 + p.rng.Int64N(1<<40)
}

// pctPick returns the index of the event to take among the enabled ones
// (the first applies are applies, the rest deliveries), as PCT would, for
// step step: an event of the enabled session of highest priority, the
// first in event order among equals (applies by session, then deliveries
// by session), found through the sets' priority heaps.
func (w *World) pctPick(applies, step int) int {
	p := &w.pct
	best := -1
	if applies > 0 {
		best = w.applyOK.byPrio.top()
	}
	if w.deliver.len() > 0 {
		if d := w.deliver.byPrio.top(); best < 0 || w.sessions[d].prio > w.sessions[best].prio {
			best = d
		}
	}
	var buf [2]int
	ties := buf[:0]
	if applies > 0 && w.applyOK.has(best) {
		ties = append(ties, w.applyOK.rank(best))
	}
	if w.deliver.has(best) {
		ties = append(ties, applies+w.deliver.rank(best))
	}
	k := ties[0]
	if len(ties) > 1 {
		k = ties[p.rng.IntN(len(ties))]
	}
	for len(p.changes) > 0 && p.changes[0] <= step {
		p.changes = p.changes[1:]
		p.low--
		w.sessions[best].prio = int64(p.low)
		w.applyOK.byPrio.fix(best)
		w.deliver.byPrio.fix(best)
	}
	return k
}
