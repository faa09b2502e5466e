package faults

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// Predicate selects requests as they reach the server: request r of
// client client in World w (at step w.Steps()+1, virtual time w.Now()).
// Match may draw from rng (the World's fault generator) and may keep state
// (Times counts).
type Predicate interface {
	fmt.Stringer
	Match(w *sim.World, client int, r *zkmem.Request, rng *rand.Rand) bool
}

// reqFunc is the part of a request a predicate looks at.
type reqFunc func(w *sim.World, client int, r *zkmem.Request, rng *rand.Rand) bool

type predFunc struct {
	name  string
	match reqFunc
}

func (p predFunc) String() string { return p.name }

func (p predFunc) Match(w *sim.World, client int, r *zkmem.Request, rng *rand.Rand) bool {
	return p.match(w, client, r, rng)
}

// OnOp selects requests with one of the given ops (zkmem.OpCreate,
// zkmem.OpGetChildren, ...; zkmem.OpCloseSession for Close).
func OnOp(ops ...zkmem.OpCode) Predicate {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.String()
	}
	return predFunc{"(OnOp " + strings.Join(names, " ") + ")", func(_ *sim.World, _ int, r *zkmem.Request, _ *rand.Rand) bool {
		for _, op := range ops {
			if r.Op == op {
				return true
			}
		}
		return false
	}}
}

// ForClient selects requests of the given clients.
func ForClient(clients ...int) Predicate {
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i] = clientName(c)
	}
	return predFunc{"(ForClient " + strings.Join(names, " ") + ")", func(_ *sim.World, client int, _ *zkmem.Request, _ *rand.Rand) bool {
		for _, c := range clients {
			if client == c {
				return true
			}
		}
		return false
	}}
}

// OnPath selects requests whose path starts with prefix.
func OnPath(prefix string) Predicate {
	return predFunc{"(OnPath " + prefix + ")", func(_ *sim.World, _ int, r *zkmem.Request, _ *rand.Rand) bool {
		return strings.HasPrefix(r.Path, prefix)
	}}
}

// AfterStep selects requests that reach the server at step n or later.
func AfterStep(n int) Predicate {
	return predFunc{"(AfterStep " + strconv.Itoa(n) + ")", func(w *sim.World, _ int, _ *zkmem.Request, _ *rand.Rand) bool {
		return w.Steps()+1 >= n
	}}
}

// AfterTime selects requests that reach the server at virtual time t or
// later.
func AfterTime(t time.Duration) Predicate {
	return predFunc{"(AfterTime " + t.String() + ")", func(w *sim.World, _ int, _ *zkmem.Request, _ *rand.Rand) bool {
		return w.Now() >= t
	}}
}

// Randomly selects each request it is asked about with probability p,
// drawn from the World's fault generator.
func Randomly(p float64) Predicate {
	return predFunc{"(Randomly " + strconv.FormatFloat(p, 'g', -1, 64) + ")", func(_ *sim.World, _ int, _ *zkmem.Request, rng *rand.Rand) bool {
		return rng.Float64() < p
	}}
}

// Times selects the first n requests it is asked about, then none. Inside
// All, put it last so that it counts only requests the others selected.
func Times(n int) Predicate {
	left := n
	return predFunc{"(Times " + strconv.Itoa(n) + ")", func(*sim.World, int, *zkmem.Request, *rand.Rand) bool {
		if left <= 0 {
			return false
		}
		left--
		return true
	}}
}

// All selects requests every p selects; it stops at the first that does
// not (so later predicates are not asked, and draw nothing).
func All(ps ...Predicate) Predicate {
	return predFunc{"(All" + joinStrings(ps) + ")", func(w *sim.World, c int, r *zkmem.Request, rng *rand.Rand) bool {
		for _, p := range ps {
			if !p.Match(w, c, r, rng) {
				return false
			}
		}
		return true
	}}
}

// Any selects requests at least one p selects; it stops at the first that
// does.
func Any(ps ...Predicate) Predicate {
	return predFunc{"(Any" + joinStrings(ps) + ")", func(w *sim.World, c int, r *zkmem.Request, rng *rand.Rand) bool {
		for _, p := range ps {
			if p.Match(w, c, r, rng) {
				return true
			}
		}
		return false
	}}
}

// Not selects requests p does not select.
func Not(p Predicate) Predicate {
	return predFunc{"(Not " + p.String() + ")", func(w *sim.World, c int, r *zkmem.Request, rng *rand.Rand) bool {
		return !p.Match(w, c, r, rng)
	}}
}

func joinStrings[T fmt.Stringer](xs []T) string {
	var b strings.Builder
	for _, x := range xs {
		b.WriteByte(' ')
		b.WriteString(x.String())
	}
	return b.String()
}
