package faults

import (
	"math/rand/v2"
	"time"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// RequestFault is a fault that strikes one request as it reaches the
// server: what it does to the request (its sim.Fate). Place it with If.
type RequestFault struct {
	name string
	fate sim.Fate
}

// The request faults.
var (
	// LoseReply: the server applies the request, then the connection
	// breaks before the reply arrives. The caller gets ErrConnectionLoss
	// although the request took effect.
	LoseReply = RequestFault{"LoseReply", sim.Fate{Fault: zkmem.LoseReply}}
	// DropRequest: the connection breaks before the server sees the
	// request. The caller gets ErrConnectionLoss; nothing happened.
	DropRequest = RequestFault{"DropRequest", sim.Fate{Fault: zkmem.DropRequest}}
	// ShuffleChildren: a getChildren reply lists the children in an order
	// drawn from the seed, as a real server's hash order would.
	ShuffleChildren = RequestFault{"ShuffleChildren", sim.Fate{Shuffle: true}}
)

// Slow makes the request take d longer to serve: a slow server, a GC pause
// on the leader.
func Slow(d time.Duration) RequestFault {
	return RequestFault{"(Slow " + d.String() + ")", sim.Fate{Slow: d}}
}

func (e RequestFault) String() string { return e.name }

// If returns a policy that applies e to every request p selects.
func (e RequestFault) If(p Predicate) sim.Policy { return &rule{e: e, p: p} }

// Always returns a policy that applies e to every request.
func (e RequestFault) Always() sim.Policy { return &rule{e: e} }

type rule struct {
	e RequestFault
	p Predicate
}

func (r *rule) String() string {
	if r.p == nil {
		return "(" + r.e.name + ")"
	}
	return "(" + r.e.name + " " + r.p.String() + ")"
}

func (r *rule) Step(*sim.World, *rand.Rand) sim.StepFault { return nil }

func (r *rule) Request(w *sim.World, client int, req *zkmem.Request, rng *rand.Rand) sim.Fate {
	if r.p == nil || r.p.Match(w, client, req, rng) {
		return r.e.fate
	}
	return sim.Fate{}
}
