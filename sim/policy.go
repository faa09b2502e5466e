package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/zksim/zksim/zkmem"
)

// StepFault is something that goes wrong in a World, injected as one step
// of the scheduler. Package zksim/faults holds the catalogue. String says
// what the fault does and to whom; it is what the trace prints.
type StepFault interface {
	fmt.Stringer
	// Inject applies the fault to w. The scheduler calls it between two
	// steps, on its own goroutine, with every client blocked. An error is
	// recorded in the trace; the run goes on.
	Inject(w *World) error
}

// Resolver is implemented by a fault whose target is drawn when it is
// injected (a random client, say). The World resolves such a fault first and
// injects, and traces, what Resolve returns; nil means there is nothing to
// strike (no live client), and nothing is injected.
type Resolver interface {
	Resolve(w *World) StepFault
}

// Policy decides which faults happen in a World. The scheduler consults it
// at every step and for every request as the request reaches the server.
// Both calls get the World's fault generator, seeded from Config.Seed, so
// decisions drawn from it replay with the seed. A Policy may keep state
// (counters, say): build a fresh one for every World.
type Policy interface {
	fmt.Stringer
	// Step returns the fault to inject as this step, or nil for none.
	Step(w *World, rng *rand.Rand) StepFault
	// Request says what happens to request r of client client as it
	// reaches the server (at step w.Steps()+1, virtual time w.Now()) and on
	// its way back. The zero Fate leaves it alone. The request is zkmem's
	// descriptor: its Op (close is zkmem.OpCloseSession, on which the fault
	// plane strikes no fault), Path (the first op's for a multi), and the
	// rest of what it asks. r is part of the client's request record,
	// which serves its next call: it is valid during the call only.
	Request(w *World, client int, r *zkmem.Request, rng *rand.Rand) Fate
}

// Starter is implemented by a Policy that needs to know its World before
// the run (its session timeout, say). New starts the policy, once, before
// it prints it at the top of the trace; a policy that wraps others starts
// them with StartPolicy.
type Starter interface {
	Start(w *World)
}

// StartPolicy starts p if it is a Starter.
func StartPolicy(p Policy, w *World) {
	if st, ok := p.(Starter); ok {
		st.Start(w)
	}
}

// Fate is what happens to one request.
type Fate struct {
	// Fault is zkmem.DropRequest (the connection breaks before the server
	// sees the request) or zkmem.LoseReply (the server applies it, then the
	// connection breaks before the reply arrives). Either way the caller
	// gets zksim.ErrConnectionLoss, and the client reconnects after
	// Config.ReconnectDelay. It reaches the request through the session's
	// zkmem fault plane, after any fault armed there for the request.
	Fault zkmem.ConnFault
	// Slow adds to the request's service time (a slow server, a GC pause
	// on the leader). It only matters when the cost model is in use or
	// Slow alone makes the request take time.
	Slow time.Duration
	// Shuffle lists the children of a getChildren reply in an order drawn
	// from the fault generator instead of the canonical order.
	Shuffle bool
}

// Merge combines two fates: the first non-zero Fault wins, Slow adds up,
// Shuffle if either shuffles.
func (f Fate) Merge(g Fate) Fate {
	if f.Fault == zkmem.NoFault {
		f.Fault = g.Fault
	}
	f.Slow += g.Slow
	f.Shuffle = f.Shuffle || g.Shuffle
	return f
}

// IsZero reports whether f leaves the request alone.
func (f Fate) IsZero() bool { return f == Fate{} }

// CostModel is the time the server takes to serve requests. The zero value
// serves every request instantly.
type CostModel struct {
	// PerRequest is the service time of every request.
	PerRequest time.Duration
	// PerByte is added for every byte of the request (path and data).
	PerByte time.Duration
	// Workers is how many requests the server serves at once; 0 means 1.
	// A session's requests are always served one after another.
	Workers int
}

// Cost returns the service time of a request of size bytes.
func (m CostModel) Cost(size int) time.Duration {
	return m.PerRequest + time.Duration(size)*m.PerByte
}

func (m CostModel) workers() int {
	if m.Workers <= 0 {
		return 1
	}
	return m.Workers
}
