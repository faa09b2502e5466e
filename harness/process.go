package harness

import (
	"context"
	"slices"
	"sync"
	"testing/synctest"

	"github.com/go-zookeeper/zk"
	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
)

// Process is one client process of a machine: its client (a simulated
// zksim.Conn, or a go-zookeeper *zk.Conn), the object New made for it, and
// the operations it runs. The trace calls processes p0, p1, ... and the
// simulator's sessions c0, c1, ...: a Native process that got a new
// session after its old one expired runs on a new one (p1 on c3, say); a
// go-zookeeper process keeps its simulator client (its index) across the
// sessions go-zookeeper opens, and a Renewing one follows its library's
// session.
type Process[P any] struct {
	*proc
	obj P
}

// Obj returns the process's object, made by Machine.New.
func (p *Process[P]) Obj() P { return p.obj }

// proc is the part of a process that does not depend on its object's
// type.
type proc struct {
	w           *runWorld
	idx         int
	sess        int           // the simulator client (session index) it runs on
	zc          *zk.Conn      // GoZK: its go-zookeeper client
	renewing    *sim.Renewing // a Renewing Native client, else nil
	partitioned bool          // disconnected by a Partition fault
	gen         int           // how many clients the process had before this one
	mu          sync.Mutex
	running     map[string]context.CancelFunc // operations in flight, by name
}

// Index returns the process's number: 0 for p0.
func (p *proc) Index() int { return p.idx }

// Session returns the index of the simulator client the process runs on
// now (c3 in the trace is 3).
func (p *proc) Session() int { return p.sess }

// Generation counts the clients the process had before its current one: 0
// until a Native process got a new client after its session ended.
func (p *proc) Generation() int { return p.gen }

// Conn returns the process's client for a Native machine: a simulated
// zksim.Conn (a Renewing one, if the check drew it so); nil for GoZK.
func (p *proc) Conn() zksim.Conn {
	if p.renewing != nil {
		return p.renewing
	}
	if p.zc != nil {
		return nil
	}
	return p.w.sw.Conn(p.sess)
}

// ZK returns the process's go-zookeeper client for a GoZK machine; nil for
// Native.
func (p *proc) ZK() *zk.Conn { return p.zc }

// SessionID returns the id of the session the process's client is on now
// (0 while a go-zookeeper client has none).
func (p *proc) SessionID() int64 { return p.sessionID() }

func (p *proc) sessionID() int64 {
	if p.zc != nil {
		return p.zc.SessionID()
	}
	return p.w.sw.Conn(p.sess).SessionID()
}

// SessionLive reports whether the server still has the session the
// process's client is on now. A process whose session expired may still
// believe it holds a lock or leads: that is what invariants look for.
func (p *proc) SessionLive() bool { return p.w.SessionLive(p.sessionID()) }

// Paused reports whether the process is paused by a Pause fault.
func (p *proc) Paused() bool { return p.w.sw.Paused(p.sess) }

// Note records a line for the trace, as from this process; safe from the
// process's goroutines.
func (p *proc) Note(format string, args ...any) { p.w.addNote(p.idx, format, args...) }

// Go runs op in a goroutine of the process under name, unless an operation
// of that name is running; it reports whether it started. The trace notes
// the start and what op returned. op's context is cancelled by Cancel and
// when the check ends. Go returns once op blocks on the simulator (or
// returns), so what the machine does next does not depend on how far the
// Go scheduler took the new goroutine.
func (p *proc) Go(name string, op func(ctx context.Context) error) bool {
	p.mu.Lock()
	if _, ok := p.running[name]; ok {
		p.mu.Unlock()
		return false
	}
	ctx, cancel := context.WithCancel(p.w.ctx)
	p.running[name] = cancel
	p.mu.Unlock()
	p.w.trace("p%d %s (session c%d)", p.idx, name, p.sess)
	p.w.wg.Add(1)
	go func() {
		defer p.w.wg.Done()
		defer cancel()
		err := op(ctx)
		p.Note("%s returned %v", name, err)
		p.mu.Lock()
		delete(p.running, name)
		p.mu.Unlock()
	}()
	synctest.Wait()
	return true
}

// Busy reports whether the process runs the operation called name ("" for
// any).
func (p *proc) Busy(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if name == "" {
		return len(p.running) > 0
	}
	_, ok := p.running[name]
	return ok
}

// Cancel cancels the process's operation called name, if it runs, and
// returns once the operation has taken the cancellation in (returned, or
// blocked again).
func (p *proc) Cancel(name string) {
	p.mu.Lock()
	cancel, ok := p.running[name]
	p.mu.Unlock()
	if !ok {
		return
	}
	p.w.trace("p%d cancel %s", p.idx, name)
	cancel()
	synctest.Wait()
}

// runningNames lists the operations in flight, sorted.
func (p *proc) runningNames() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var names []string
	for n := range p.running {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Partitioned reports whether the process is cut off by a Partition
// (the action, or World.Partition) not yet healed.
func (p *proc) Partitioned() bool { return p.partitioned }

// SetRenewing makes r the process's client library from now on: a
// sim.Renewing over the process's session (sim.World.Renewing of
// Session), which replaces an expired session at once under the same
// object, as Machine.Renewing draws it. Call it from Machine.Init, before
// the process runs anything; Conn returns r from then on.
func (p *proc) SetRenewing(r *sim.Renewing) { p.renewing = r }

// Partition cuts the process's connection off (faults.Disconnect) until
// Heal, as the Partition action does; the liveness phase heals it. For a
// machine's own action (Machine.Actions).
func (p *proc) Partition(t *rapid.T) {
	p.partitioned = true
	p.w.inject(t, faults.Disconnect(p.sess, -1))
}

// Heal reconnects the process if Partition or the Partition action cut it
// off, unless it is paused (a paused process cannot reconnect; the
// liveness phase resumes and heals it).
func (p *proc) Heal(t *rapid.T) {
	if !p.partitioned || p.Paused() {
		return
	}
	p.partitioned = false
	p.w.inject(t, faults.Reconnect(p.sess))
}
