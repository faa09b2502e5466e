package faults

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// OnWrite selects the requests that change the tree: create, delete,
// setData, setACL and multi.
func OnWrite() Predicate {
	return predFunc{"(OnWrite)", func(_ *sim.World, _ int, r *zkmem.Request, _ *rand.Rand) bool {
		switch r.Op {
		case zkmem.OpCreate, zkmem.OpDelete, zkmem.OpSetData, zkmem.OpSetACL, zkmem.OpMulti:
			return true
		}
		return false
	}}
}

// SwarmOptions tunes Swarm. The zero value is a fair start.
type SwarmOptions struct {
	// Intensity is the chance that a request matching a request fault's
	// target meets it, at weight 1 (default 0.05); a step fault is drawn
	// with probability Intensity/4 per step, at weight 1.
	Intensity float64
	// Dirs are the directories a third party deletes nodes under
	// (DeleteUnder); none: no third-party deletes.
	Dirs []string
}

// Swarm is swarm testing (Groce, Zhang, Eide, Chen and Regehr, "Swarm
// Testing", ISSTA 2012) over the catalogue: when its World starts it draws
// from the seed a subset of the fault kinds, each with a weight from 1 to
// 4, and for each request fault a target (any request, the writes, the
// multis, or the deletes and multis: a queue's remove, a lock's release),
// and injects only those. Uniform faults spread thin over every
// kind, so a run meets each rarely, and a fault can mask another (an
// expiry ends the session whose lost reply would have mattered); a swarm
// run meets few kinds, often, and the seeds together cover them all. The
// trace's first line prints what was drawn.
func Swarm(o SwarmOptions) sim.Policy {
	if o.Intensity <= 0 {
		o.Intensity = 0.05
	}
	return &swarm{o: o}
}

type swarm struct {
	o     SwarmOptions
	desc  string
	inner sim.Policy
}

// swarmTarget is where a request fault of the swarm strikes.
type swarmTarget struct {
	name string
	pred func() Predicate
}

var swarmTargets = []swarmTarget{
	{"any", nil},
	{"writes", OnWrite},
	{"multi", func() Predicate { return OnOp(zkmem.OpMulti) }},
	{"deletes", func() Predicate { return OnOp(zkmem.OpDelete, zkmem.OpMulti) }},
}

// Start implements sim.Starter: it draws the swarm from w's fault
// generator.
func (s *swarm) Start(w *sim.World) {
	if s.inner != nil {
		return
	}
	rng := w.Rand()
	st := w.SessionTimeout()
	p := s.o.Intensity
	type stepOpt struct {
		name string
		f    []sim.StepFault
	}
	var steps []stepOpt
	for i := range catalog {
		if e := &catalog[i]; e.Step && e.Swarm.On && (!e.Ensemble || w.Members() > 1) {
			for _, fs := range e.Swarm.Choices(st, s.o.Dirs) {
				steps = append(steps, stepOpt{e.Name, stepFaults(fs)})
			}
		}
	}
	var (
		desc   []string
		pool   []sim.StepFault
		rules  []sim.Policy
		chosen int
	)
	for chosen == 0 {
		desc, pool, rules = desc[:0], pool[:0], rules[:0]
		for _, o := range steps {
			if rng.IntN(2) == 0 {
				continue
			}
			wt := 1 + rng.IntN(4)
			for range wt {
				pool = append(pool, o.f...)
			}
			desc = append(desc, o.name+"×"+strconv.Itoa(wt))
			chosen++
		}
		for i := range catalog {
			e := &catalog[i]
			if e.Step || !e.Swarm.On || rng.IntN(2) == 0 {
				continue
			}
			wt := 1 + rng.IntN(4)
			rate := cmp.Or(e.Swarm.Rate, p)
			pr := e.predicate(min(1, rate*float64(wt)))
			tgt := swarmTargets[0]
			if e.Swarm.Aimed {
				tgt = swarmTargets[rng.IntN(len(swarmTargets))]
			}
			if tgt.pred != nil {
				pr = All(tgt.pred(), pr)
			}
			rules = append(rules, e.Request.If(pr))
			desc = append(desc, fmt.Sprintf("%v×%d@%s", e.Request, wt, tgt.name))
			chosen++
		}
	}
	if len(pool) > 0 {
		// Weighted by repetition, the rate kept at p/4 per step for an
		// average weight.
		rules = append([]sim.Policy{Sometimes(p/4*float64(len(pool))/float64(2*len(steps)), pool...)}, rules...)
	}
	s.desc = "(Swarm " + strconv.FormatFloat(p, 'g', -1, 64) + ": " + strings.Join(desc, " ") + ")"
	s.inner = Combine(rules...)
}

func (s *swarm) String() string {
	if s.inner == nil {
		return "(Swarm " + strconv.FormatFloat(s.o.Intensity, 'g', -1, 64) + ")"
	}
	return s.desc
}

func (s *swarm) Step(w *sim.World, rng *rand.Rand) sim.StepFault {
	s.Start(w)
	return s.inner.Step(w, rng)
}

func (s *swarm) Request(w *sim.World, client int, r *zkmem.Request, rng *rand.Rand) sim.Fate {
	s.Start(w)
	return s.inner.Request(w, client, r, rng)
}

// stepFaults returns fs as sim.Faults.
func stepFaults(fs []StepFault) []sim.StepFault {
	out := make([]sim.StepFault, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}
