package faults

import (
	"math/rand/v2"
	"time"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// Effect is what a fault does to one request as it reaches the server.
// Place it with If.
type Effect struct {
	name string
	fate sim.Fate
}

// The request faults.
var (
	// LoseReply: the server applies the request, then the connection
	// breaks before the reply arrives. The caller gets ErrConnectionLoss
	// although the request took effect.
	LoseReply = Effect{"LoseReply", sim.Fate{Fault: zkmem.LoseReply}}
	// DropRequest: the connection breaks before the server sees the
	// request. The caller gets ErrConnectionLoss; nothing happened.
	DropRequest = Effect{"DropRequest", sim.Fate{Fault: zkmem.DropRequest}}
	// ShuffleChildren: a getChildren reply lists the children in an order
	// drawn from the seed, as a real server's hash order would.
	ShuffleChildren = Effect{"ShuffleChildren", sim.Fate{Shuffle: true}}
)

// Slow makes the request take d longer to serve: a slow server, a GC pause
// on the leader.
func Slow(d time.Duration) Effect {
	return Effect{"(Slow " + d.String() + ")", sim.Fate{Slow: d}}
}

func (e Effect) String() string { return e.name }

// If returns a policy that applies e to every request p selects.
func (e Effect) If(p Predicate) sim.Policy { return &rule{e: e, p: p} }

// Always returns a policy that applies e to every request.
func (e Effect) Always() sim.Policy { return &rule{e: e} }

type rule struct {
	e Effect
	p Predicate
}

func (r *rule) String() string {
	if r.p == nil {
		return "(" + r.e.name + ")"
	}
	return "(" + r.e.name + " " + r.p.String() + ")"
}

func (r *rule) Step(*sim.World, *rand.Rand) sim.Fault { return nil }

func (r *rule) Request(w *sim.World, client int, req *zkmem.Request, rng *rand.Rand) sim.Fate {
	if r.p == nil || r.p.Match(w, client, req, rng) {
		return r.e.fate
	}
	return sim.Fate{}
}
