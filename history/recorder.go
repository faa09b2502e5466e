package history

import (
	"slices"
	"sync"
	"sync/atomic"
)

// A Clock timestamps the events of a history in ticks. Now must never go
// down, and must keep real-time order: an operation that returned at tick
// t took effect before any operation invoked at a tick ≥ t takes effect.
// The Recorder turns ticks into times so that, at equal ticks, every
// return comes before every invocation (an invocation at tick t gets time
// 2t+1, a return 2t).
//
// The zero Recorder counts its own events, which is right wherever the
// recorder sees calls and returns in real-time order. Under the simulator,
// an ApplyClock makes histories deterministic.
type Clock interface {
	Now() int64
}

// ApplyClock is a Clock for the simulator: its tick is the number of
// requests the server has applied. Count them from sim.Config.OnApply:
//
//	var clock history.ApplyClock
//	cfg.OnApply = func(int, *zkmem.Request) { clock.Applied() }
//
// A call made between two applications cannot take effect before the
// second, and a reply delivered after an application comes from a request
// applied no later, so ties are ordered as Clock requires, and the
// history does not depend on the order in which goroutines woken at the
// same instant run.
type ApplyClock struct{ n atomic.Int64 }

// Applied counts one application. It is safe for concurrent use.
func (c *ApplyClock) Applied() { c.n.Add(1) }

// Now returns the number of applications counted.
func (c *ApplyClock) Now() int64 { return c.n.Load() }

// counter is the default Clock: one tick per event.
type counter struct{ n atomic.Int64 }

func (c *counter) Now() int64 { return c.n.Add(1) }

// Recorder records a history. Record calls explicitly with Invoke and
// Return, or wrap a zksim.Conn with Conn. It is safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	clock Clock
	ops   []Op
}

// NewRecorder returns a Recorder that timestamps with clock; nil counts
// the recorder's own events (see Clock).
func NewRecorder(clock Clock) *Recorder {
	if clock == nil {
		clock = &counter{}
	}
	return &Recorder{clock: clock}
}

// Invoke records the call of op (its Client, Kind, Path, Data, Version and
// What; Result and times are set by the recorder) and returns its ID, to be
// passed to Return when the call returns. Data is copied.
func (r *Recorder) Invoke(op Op) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	op.ID = len(r.ops)
	op.Data = slices.Clone(op.Data)
	op.Result = Result{}
	op.Invoked = 2*r.clock.Now() + 1
	op.Returned = Pending
	r.ops = append(r.ops, op)
	return op.ID
}

// Return records what call id returned. Data and Children are copied.
func (r *Recorder) Return(id int, res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	res.Data = slices.Clone(res.Data)
	res.Children = slices.Clone(res.Children)
	if res.Stat != nil {
		s := *res.Stat
		res.Stat = &s
	}
	r.ops[id].Result = res
	// A call that returns in the tick it was invoked in (refused at once,
	// say on a broken connection) returns just after its invocation.
	r.ops[id].Returned = max(2*r.clock.Now(), r.ops[id].Invoked+1)
}

func (r *Recorder) init() {
	if r.clock == nil {
		r.clock = &counter{}
	}
}

// History returns a copy of what was recorded so far, ordered by ID (the
// order of invocation). Calls that have not returned are Pending.
func (r *Recorder) History() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}
