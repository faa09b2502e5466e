package sim

import (
	"container/heap"
	"time"
)

// timedKind is what a timed action does when its time comes.
type timedKind uint8

const (
	tExpire    timedKind = iota // the server expires a silent session
	tReconnect                  // a disconnected client starts reconnecting
	tResume                     // a pause ends
	tUndelay                    // a delivery delay ends
	tComplete                   // a request finishes its service time
	tSlowEnd                    // a slow-server spell ends
	tEnsemble                   // an ensemble's action: an election, a restart, a heal (fn)
)

// timed is an action of the scheduler's own, due at a virtual time. Timed
// actions run, in (at, seq) order, as soon as their time has come and
// before any other event.
type timed struct {
	at   time.Duration
	seq  uint64
	kind timedKind
	s    *session
	gen  int
	req  *request
	fn   func() // tEnsemble's action
}

// timeline is a min-heap of timed actions by (at, seq).
type timeline struct {
	items []*timed
	seq   uint64
}

func (t *timeline) Len() int { return len(t.items) }
func (t *timeline) Less(i, j int) bool {
	a, b := t.items[i], t.items[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}
func (t *timeline) Swap(i, j int) { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *timeline) Push(x any)    { t.items = append(t.items, x.(*timed)) }
func (t *timeline) Pop() any {
	n := len(t.items) - 1
	x := t.items[n]
	t.items[n] = nil
	t.items = t.items[:n]
	return x
}

func (t *timeline) add(a *timed) {
	t.seq++
	a.seq = t.seq
	heap.Push(t, a)
}

// next returns the earliest action, or nil.
func (t *timeline) next() *timed {
	if len(t.items) == 0 {
		return nil
	}
	return t.items[0]
}

func (t *timeline) pop() *timed { return heap.Pop(t).(*timed) }

// schedule adds a timed action at virtual time at (not before now).
func (w *World) schedule(at time.Duration, a *timed) {
	a.at = max(at, w.now)
	w.timeline.add(a)
}
