package faults

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// At injects f at step n (at the first step the World takes from step n
// on, if the run skipped it).
func At(n int, f sim.Fault) sim.Policy {
	return &once{name: fmt.Sprintf("(At %d %v)", n, f), f: f, ready: func(w *sim.World) bool { return w.Steps()+1 >= n }}
}

// AtTime injects f at the first step taken at virtual time t or later.
func AtTime(t time.Duration, f sim.Fault) sim.Policy {
	return &once{name: fmt.Sprintf("(AtTime %v %v)", t, f), f: f, ready: func(w *sim.World) bool { return w.Now() >= t }}
}

type once struct {
	name  string
	f     sim.Fault
	ready func(*sim.World) bool
	done  bool
}

func (o *once) String() string { return o.name }

func (o *once) Step(w *sim.World, _ *rand.Rand) sim.Fault {
	if o.done || !o.ready(w) {
		return nil
	}
	o.done = true
	return o.f
}

func (o *once) Request(sim.RequestInfo, *rand.Rand) sim.Fate { return sim.Fate{} }

// Sometimes injects, at each step with probability p, one of fs drawn at
// random. Faults aimed at AnyClient strike a client drawn at random.
func Sometimes(p float64, fs ...sim.Fault) sim.Policy {
	return &sometimes{p: p, fs: fs}
}

type sometimes struct {
	p  float64
	fs []sim.Fault
}

func (s *sometimes) String() string {
	return "(Sometimes " + strconv.FormatFloat(s.p, 'g', -1, 64) + joinStrings(s.fs) + ")"
}

func (s *sometimes) Step(_ *sim.World, rng *rand.Rand) sim.Fault {
	if len(s.fs) == 0 || rng.Float64() >= s.p {
		return nil
	}
	return s.fs[rng.IntN(len(s.fs))]
}

func (s *sometimes) Request(sim.RequestInfo, *rand.Rand) sim.Fate { return sim.Fate{} }

// Combine joins policies: at each step the first that has a fault to
// inject wins (later ones are not asked); every request gets the merged
// fates of all of them (the first fault, the sum of the slowdowns).
func Combine(ps ...sim.Policy) sim.Policy { return combined(ps) }

type combined []sim.Policy

func (c combined) String() string { return "(Combine" + joinStrings([]sim.Policy(c)) + ")" }

func (c combined) Step(w *sim.World, rng *rand.Rand) sim.Fault {
	for _, p := range c {
		if f := p.Step(w, rng); f != nil {
			return f
		}
	}
	return nil
}

func (c combined) Request(r sim.RequestInfo, rng *rand.Rand) sim.Fate {
	var f sim.Fate
	for _, p := range c {
		f = f.Merge(p.Request(r, rng))
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

func (l *limit) Step(w *sim.World, rng *rand.Rand) sim.Fault {
	if l.steps <= 0 {
		return nil
	}
	f := l.p.Step(w, rng)
	if f != nil {
		l.steps--
	}
	return f
}

func (l *limit) Request(r sim.RequestInfo, rng *rand.Rand) sim.Fate {
	if l.reqs <= 0 {
		return sim.Fate{}
	}
	f := l.p.Request(r, rng)
	if !f.IsZero() {
		l.reqs--
	}
	return f
}

// Mix is the whole catalogue at once, at an intensity p (0.01 is a fair
// start): each request loses its reply or is dropped with probability p,
// children are shuffled half the time, and at each step, with probability
// p/4, a random client is disconnected for up to a second, expired, paused
// for sessionTimeout and a half (long enough to expire), or has its
// deliveries delayed for up to half a second.
func Mix(p float64, sessionTimeout time.Duration) sim.Policy {
	return Combine(
		Sometimes(p/4,
			Disconnect{Client: AnyClient, For: 200 * time.Millisecond},
			Disconnect{Client: AnyClient, For: time.Second},
			Expire{Client: AnyClient},
			Pause{Client: AnyClient, For: sessionTimeout + sessionTimeout/2},
			Pause{Client: AnyClient, For: sessionTimeout / 3},
			Delay{Client: AnyClient, For: 500 * time.Millisecond},
		),
		LoseReply.If(Randomly(p)),
		DropRequest.If(Randomly(p)),
		ShuffleChildren.If(All(OnOp(zkmem.OpGetChildren), Randomly(0.5))),
	)
}
