package explore

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/recipes/barrier"
)

// The barrier machines.
//
// Barrier: client 0 sets and removes the barrier, the others wait on it.
// Invariant: a Wait returns only if the barrier node it began under was
// removed meanwhile (it is gone, or it is another node: another czxid).
// Liveness: once faults stop and the barrier is removed, every waiter
// returns.
//
// Double barrier and start barrier: every client is a member of one group
// of all the clients. Invariants: no member passes Enter (Wait) before all
// members have arrived; no member's Leave returns while a member that
// entered, and still has its session, has not begun to leave. Liveness:
// once faults stop every member enters and (double barrier) leaves.

const barrierPath = "/barrier/b"

type barrierFamily struct {
	w  *world
	bs []*barrier.Barrier
}

func newBarrierFamily(w *world) *barrierFamily {
	f := &barrierFamily{w: w}
	for _, c := range w.clients {
		f.bs = append(f.bs, barrier.New(c.conn, barrierPath))
	}
	return f
}

func (f *barrierFamily) renew(c *client) { f.bs[c.idx] = barrier.New(c.conn, barrierPath) }

// czxid returns the czxid of the barrier node, 0 when it is not set.
func (f *barrierFamily) czxid() int64 {
	ok, st, err := f.w.observer.Exists(f.w.ctx, barrierPath)
	if err != nil || !ok {
		return 0
	}
	return st.Czxid
}

func (f *barrierFamily) actions() map[string]func(*rapid.T) {
	controller := func(t *rapid.T) *client {
		c := f.w.clients[0]
		if c.paused() || c.busy("") {
			t.SkipNow()
		}
		return c
	}
	return map[string]func(*rapid.T){
		"Set": func(t *rapid.T) {
			c := controller(t)
			b := f.bs[0]
			c.start("set", b.Set)
		},
		"Remove": func(t *rapid.T) {
			c := controller(t)
			b := f.bs[0]
			c.start("remove", b.Remove)
		},
		"Wait": func(t *rapid.T) {
			var idle []*client
			for _, c := range f.w.awake() {
				if c.idx > 0 && !c.busy("") {
					idle = append(idle, c)
				}
			}
			f.wait(drawClient(t, idle, "wait"))
		},
		"Cancel": func(t *rapid.T) {
			var waiting []*client
			for _, c := range f.w.awake() {
				if c.busy("wait") {
					waiting = append(waiting, c)
				}
			}
			drawClient(t, waiting, "cancel").stop("wait")
		},
	}
}

func (f *barrierFamily) wait(c *client) {
	b := f.bs[c.idx]
	before := f.czxid()
	c.start("wait", func(ctx context.Context) error {
		err := b.Wait(ctx)
		if err == nil && before != 0 && f.czxid() == before {
			f.w.violate("passed a set barrier", "p%d's Wait returned while the barrier it began under (czxid %#x) is still set", c.idx, before)
		}
		return err
	})
}

func (f *barrierFamily) check() {}

// live removes the barrier and waits for every waiter to return.
func (f *barrierFamily) live() bool {
	c := f.w.clients[0]
	if c.busy("") {
		return false
	}
	if f.czxid() != 0 {
		c.start("remove", f.bs[0].Remove)
		return false
	}
	for _, c := range f.w.clients[1:] {
		if c.busy("") {
			return false
		}
	}
	return true
}

func (f *barrierFamily) stuck() string {
	var out []string
	for _, c := range f.w.clients {
		if c.busy("") {
			out = append(out, fmt.Sprintf("p%d still waits", c.idx))
		}
	}
	return strings.Join(out, "; ")
}

// groupFamily is the machine of the double barrier (leave true) and of the
// start barrier (leave false): every client is a member of one group of
// size len(clients).
type groupFamily struct {
	w     *world
	leave bool
	size  int
	dir   string
	// earlyLeave makes members leave as the flawed earlyLeave does
	// (flawed_barrier_test.go) instead of with the recipe's Leave.
	earlyLeave bool

	mu      sync.Mutex
	ms      []*member
	arrived int // members whose Enter (Wait) began, ever
}

type member struct {
	double  *barrier.DoubleBarrier
	start   *barrier.StartBarrier
	entered bool // passed Enter (Wait)
	leaving bool // began Leave
	left    bool // Leave returned nil
	dead    bool // lost its session after entering: no longer a member
}

func newGroupFamily(w *world, leave bool) *groupFamily {
	f := &groupFamily{w: w, leave: leave, size: len(w.clients), dir: "/group"}
	for _, c := range w.clients {
		f.ms = append(f.ms, f.newMember(c))
	}
	return f
}

func (f *groupFamily) newMember(c *client) *member {
	if f.leave {
		b, err := barrier.NewDouble(c.conn, f.dir, f.size)
		if err != nil {
			panic(err) // the family's size is at least 1
		}
		return &member{double: b}
	}
	b, err := barrier.NewStart(c.conn, f.dir, f.size)
	if err != nil {
		panic(err) // the family's size is at least 1
	}
	return &member{start: b}
}

func (f *groupFamily) renew(c *client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	old := f.ms[c.idx]
	m := f.newMember(c)
	switch {
	case old.left:
		m.entered, m.leaving, m.left = true, true, true // its round is over for it
	case old.entered:
		m.entered, m.dead = true, true // it was a member; it is gone
	}
	f.ms[c.idx] = m
}

func (f *groupFamily) enter(c *client) {
	f.mu.Lock()
	m := f.ms[c.idx]
	f.arrived++
	f.mu.Unlock()
	c.start("enter", func(ctx context.Context) error {
		var err error
		if f.leave {
			err = m.double.Enter(ctx)
		} else {
			err = m.start.Wait(ctx)
		}
		if err != nil {
			return err
		}
		f.mu.Lock()
		m.entered = true
		arrived := f.arrived
		f.mu.Unlock()
		if arrived < f.size {
			f.w.violate("passed early", "p%d passed the barrier when only %d of %d members had arrived", c.idx, arrived, f.size)
		}
		return nil
	})
}

func (f *groupFamily) leaveGroup(c *client) {
	f.mu.Lock()
	m := f.ms[c.idx]
	m.leaving = true
	f.mu.Unlock()
	c.start("leave", func(ctx context.Context) error {
		leave := m.double.Leave
		if f.earlyLeave {
			leave = func(ctx context.Context) error { return earlyLeave(ctx, c.conn, f.dir) }
		}
		if err := leave(ctx); err != nil {
			return err
		}
		f.mu.Lock()
		m.left = true
		var early []string
		for i, o := range f.ms {
			if o.entered && !o.dead && !o.leaving && f.w.sessionLive(f.w.clients[i]) {
				early = append(early, fmt.Sprintf("p%d", i))
			}
		}
		f.mu.Unlock()
		if len(early) > 0 {
			f.w.violate("left early", "p%d left the double barrier while members %s had not begun to leave", c.idx, strings.Join(early, ", "))
		}
		return nil
	})
}

// can lists the awake idle clients whose member satisfies ok.
func (f *groupFamily) can(ok func(*member) bool) []*client {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*client
	for _, c := range f.w.awake() {
		if !c.busy("") && ok(f.ms[c.idx]) {
			out = append(out, c)
		}
	}
	return out
}

func (f *groupFamily) actions() map[string]func(*rapid.T) {
	a := map[string]func(*rapid.T){
		"Enter": func(t *rapid.T) {
			f.enter(drawClient(t, f.can(func(m *member) bool { return !m.entered }), "enter"))
		},
		"Cancel": func(t *rapid.T) {
			var busy []*client
			for _, c := range f.w.awake() {
				if c.busy("") {
					busy = append(busy, c)
				}
			}
			c := drawClient(t, busy, "cancel")
			c.stop("enter")
			c.stop("leave")
		},
	}
	if f.leave {
		a["Leave"] = func(t *rapid.T) {
			f.leaveGroup(drawClient(t, f.can(func(m *member) bool { return m.entered && !m.dead && !m.left && !m.leaving }), "leave"))
		}
	}
	return a
}

func (f *groupFamily) check() {}

// live: before the group opens, every member enters; once it is open,
// every member that passed leaves (double barrier). A member that arrives
// at a double barrier after its round is over waits for a next round that
// nobody else joins: it is cancelled once nothing else can happen.
func (f *groupFamily) live() bool {
	f.mu.Lock()
	opened, pending := false, false
	for i, m := range f.ms {
		opened = opened || m.entered
		if m.entered && !m.dead && !m.left && f.leave {
			pending = pending || f.w.sessionLive(f.w.clients[i])
		}
	}
	f.mu.Unlock()
	done := true
	for _, c := range f.w.clients {
		f.mu.Lock()
		m := f.ms[c.idx]
		needEnter := !m.entered && !opened
		needLeave := f.leave && m.entered && !m.dead && !m.left
		f.mu.Unlock()
		switch {
		case c.busy("enter") && f.leave && opened && !pending && !f.w.inFlight(c):
			c.stop("enter") // arrived after the round: no group will form
			done = false
		case c.busy(""):
			done = false
		case needEnter:
			f.enter(c)
			done = false
		case needLeave:
			f.leaveGroup(c)
			done = false
		}
	}
	return done
}

func (f *groupFamily) stuck() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i, m := range f.ms {
		out = append(out, fmt.Sprintf("p%d: entered %v, leaving %v, left %v, dead %v", i, m.entered, m.leaving, m.left, m.dead))
	}
	return strings.Join(out, "; ") + "; children: " + strings.Join(f.w.children(f.dir), " ")
}
