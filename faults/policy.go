package faults

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// At injects f at step n (at the first step the World takes from step n
// on, if the run skipped it).
func At(n int, f sim.StepFault) sim.Policy {
	return &once{name: fmt.Sprintf("(At %d %v)", n, f), f: f, ready: func(w *sim.World) bool { return w.Steps()+1 >= n }}
}

// AtTime injects f at the first step taken at virtual time t or later.
func AtTime(t time.Duration, f sim.StepFault) sim.Policy {
	return &once{name: fmt.Sprintf("(AtTime %v %v)", t, f), f: f, ready: func(w *sim.World) bool { return w.Now() >= t }}
}

type once struct {
	name  string
	f     sim.StepFault
	ready func(*sim.World) bool
	done  bool
}

func (o *once) String() string { return o.name }

func (o *once) Step(w *sim.World, _ *rand.Rand) sim.StepFault {
	if o.done || !o.ready(w) {
		return nil
	}
	o.done = true
	return o.f
}

func (o *once) Request(*sim.World, int, *zkmem.Request, *rand.Rand) sim.Fate { return sim.Fate{} }

// Sometimes injects, at each step with probability p, one of fs drawn at
// random. Faults aimed at AnyClient strike a client drawn at random.
func Sometimes(p float64, fs ...sim.StepFault) sim.Policy {
	return &sometimes{p: p, fs: fs}
}

type sometimes struct {
	p  float64
	fs []sim.StepFault
}

func (s *sometimes) String() string {
	return "(Sometimes " + strconv.FormatFloat(s.p, 'g', -1, 64) + joinStrings(s.fs) + ")"
}

func (s *sometimes) Step(_ *sim.World, rng *rand.Rand) sim.StepFault {
	if len(s.fs) == 0 || rng.Float64() >= s.p {
		return nil
	}
	return s.fs[rng.IntN(len(s.fs))]
}

func (s *sometimes) Request(*sim.World, int, *zkmem.Request, *rand.Rand) sim.Fate {
	return sim.Fate{}
}

// Combine joins policies: at each step the first that has a fault to
// inject wins (later ones are not asked); every request gets the merged
// fates of all of them (the first fault, the sum of the slowdowns).
func Combine(ps ...sim.Policy) sim.Policy { return combined(ps) }

type combined []sim.Policy

func (c combined) String() string { return "(Combine" + joinStrings([]sim.Policy(c)) + ")" }

// Start implements sim.Starter: it starts the policies joined.
func (c combined) Start(w *sim.World) {
	for _, p := range c {
		sim.StartPolicy(p, w)
	}
}

func (c combined) Step(w *sim.World, rng *rand.Rand) sim.StepFault {
	for _, p := range c {
		if f := p.Step(w, rng); f != nil {
			return f
		}
	}
	return nil
}

func (c combined) Request(w *sim.World, client int, r *zkmem.Request, rng *rand.Rand) sim.Fate {
	var f sim.Fate
	for _, p := range c {
		f = f.Merge(p.Request(w, client, r, rng))
	}
	return f
}

// Limit lets p inject at most n step faults and strike at most n requests;
// after that it does nothing.
func Limit(n int, p sim.Policy) sim.Policy { return &limit{n: n, steps: n, reqs: n, p: p} }

type limit struct {
	n, steps, reqs int
	p              sim.Policy
}

func (l *limit) String() string { return fmt.Sprintf("(Limit %d %v)", l.n, l.p) }

// Start implements sim.Starter: it starts the policy limited.
func (l *limit) Start(w *sim.World) { sim.StartPolicy(l.p, w) }

func (l *limit) Step(w *sim.World, rng *rand.Rand) sim.StepFault {
	if l.steps <= 0 {
		return nil
	}
	f := l.p.Step(w, rng)
	if f != nil {
		l.steps--
	}
	return f
}

func (l *limit) Request(w *sim.World, client int, r *zkmem.Request, rng *rand.Rand) sim.Fate {
	if l.reqs <= 0 {
		return sim.Fate{}
	}
	f := l.p.Request(w, client, r, rng)
	if !f.IsZero() {
		l.reqs--
	}
	return f
}

// Mix is the whole catalogue at once, at an intensity p (0.01 is a fair
// start): each request loses its reply or is dropped with probability p,
// children are shuffled half the time, and at each step, with probability
// p/4, a random client is disconnected for up to a second, expired, paused
// for its session timeout and a half (long enough to expire) or a third of
// it, or has its deliveries delayed for up to half a second. The session
// timeout is the World's (sim.World.SessionTimeout), read when the policy
// first acts: the same policy fits every World.
func Mix(p float64) sim.Policy {
	return &mix{p: p}
}

// mix builds the Mix policy for the session timeout of its World, which it
// learns when the World starts (sim.Starter), and prints itself with it.
type mix struct {
	p     float64
	inner sim.Policy
}

// Start implements sim.Starter.
func (m *mix) Start(w *sim.World) { m.policy(w) }

func (m *mix) policy(w *sim.World) sim.Policy {
	if m.inner == nil {
		m.inner = mixFor(m.p, w.SessionTimeout(), w.Members() > 1)
	}
	return m.inner
}

func (m *mix) String() string {
	if m.inner == nil {
		return "(Mix " + strconv.FormatFloat(m.p, 'g', -1, 64) + ")"
	}
	return m.inner.String()
}

func (m *mix) Step(w *sim.World, rng *rand.Rand) sim.StepFault { return m.policy(w).Step(w, rng) }

func (m *mix) Request(w *sim.World, client int, r *zkmem.Request, rng *rand.Rand) sim.Fate {
	return m.policy(w).Request(w, client, r, rng)
}

// mixFor is Mix for sessionTimeout: the rows of the catalogue Mix draws
// (the ensemble's only with ensemble).
func mixFor(p float64, sessionTimeout time.Duration, ensemble bool) sim.Policy {
	var steps []sim.StepFault
	var rules []sim.Policy
	for i := range catalog {
		e := &catalog[i]
		switch {
		case !e.Mix.On, e.Ensemble && !ensemble:
		case e.Step:
			for _, fs := range e.Swarm.Choices(sessionTimeout, nil) {
				steps = append(steps, stepFaults(fs)...)
			}
		default:
			rules = append(rules, e.Request.If(e.predicate(cmp.Or(e.Mix.Rate, p))))
		}
	}
	return Combine(append([]sim.Policy{Sometimes(p/4, steps...)}, rules...)...)
}
