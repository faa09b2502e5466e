package sim

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/pump"
	"github.com/zksim/zksim/zkmem"
)

// Conn is a simulated client connection. It implements zksim.Conn,
// zksim.PersistentWatcher, zksim.EphemeralsLister and zksim.ChildCounter.
//
// Every call that talks to the server becomes a pending request of this
// client's session and blocks until the scheduler applies it and then
// delivers its reply, until ctx is done (the request may still be applied
// later, as if its reply were lost), or until the World is closed
// (zksim.ErrClosing). Watch channels are zkmem's: they receive an event when
// the scheduler delivers it. State and SessionEvents report what the client
// has been told so far, which may lag behind the server.
type Conn struct {
	s *session

	mu       sync.Mutex
	state    zksim.State
	subs     []*pump.Pump
	finished bool
}

var (
	_ zksim.Conn              = (*Conn)(nil)
	_ zksim.PersistentWatcher = (*Conn)(nil)
	_ zksim.EphemeralsLister  = (*Conn)(nil)
	_ zksim.ChildCounter      = (*Conn)(nil)
)

// Index returns the client's index in its World.
func (c *Conn) Index() int { return c.s.idx }

// Name returns the client's name in the trace: "c" and its index.
func (c *Conn) Name() string { return c.s.name }

// Underlying returns the zkmem connection the scheduler applies this
// client's requests on. Calls on it bypass the scheduler.
func (c *Conn) Underlying() *zkmem.Conn { return c.s.zc }

// call sends the request desc describes and waits for its reply. The
// request's record is the session's spare one if it has one (see
// session.spare): a client waits for one request at a time, and its record
// serves it from call to call instead of being garbage at every reply.
func (c *Conn) call(ctx context.Context, name string, desc *zkmem.Request, size int, do func(ctx context.Context, zc *zkmem.Conn) result) result {
	if err := ctx.Err(); err != nil {
		return result{err: err}
	}
	s := c.s
	w := s.w
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return result{err: zksim.ErrClosing}
	}
	req := s.spare
	var done chan struct{}
	if req != nil {
		s.spare, done = nil, req.done
	} else {
		req, done = new(request), make(chan struct{}, 1)
	}
	*req = request{desc: *desc, name: name, size: size, do: do, done: done}
	s.inbox = append(s.inbox, req)
	if len(s.inbox) == 1 {
		w.arrived = append(w.arrived, s)
	}
	w.mu.Unlock()
	w.signal()
	// Close ends every request in flight (endRequests), so neither the
	// World's done channel nor its context (which World.Go hands to every
	// client) needs watching here. Thousands of clients waiting on one
	// channel would each pay, at every wake-up, for being unlinked from
	// among the others' waits, an unlinking that touches their memory.
	cancel := ctx.Done()
	if cancel == nil || cancel == w.ctx.Done() {
		// A plain receive: a select parks with more state (its cases,
		// their orders) on a stack that, among thousands of clients, has
		// left the caches by the time the reply wakes it.
		<-req.done
		return s.recycle(req)
	}
	select {
	case <-req.done:
		return s.recycle(req)
	case <-cancel:
		w.mu.Lock()
		// Sent, and left: whatever this goroutine sends next was sent
		// after it (see collect). The World still holds the request: it is
		// not recycled.
		req.abandoned = true
		w.mu.Unlock()
		return result{err: ctx.Err()}
	}
}

// recycle returns req's result and keeps req as the session's spare
// record, to be cleared by the call that reuses it (one write of its
// memory, not two). The World let go of req when it finished it, unless
// the World is closed (endRequests leaves the requests it ends where they
// are): then req is left alone.
func (s *session) recycle(req *request) result {
	res := req.res
	w := s.w
	w.mu.Lock()
	if !w.closed && s.spare == nil {
		s.spare = req
	}
	w.mu.Unlock()
	return res
}

// endRequests ends every native request in flight with zksim.ErrClosing,
// as the World closes: those not yet taken in, those pending, the one in
// service and those whose reply waits in a FIFO. They stay where they are
// (InFlight and the coverage still see them). Called by Close, after
// w.closed was set: no request arrives any more, and none is delivered.
func (w *World) endRequests() {
	end := func(req *request) {
		if req != nil && req.done != nil && !req.ended {
			req.res = result{err: zksim.ErrClosing}
			req.finish()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.sessions {
		for _, req := range s.inbox {
			end(req)
		}
		for i := range s.pending.len() {
			end(s.pending.at(i))
		}
		end(s.inService)
		for i := range s.fifo.len() {
			if it := s.fifo.at(i); it.kind == itemReply {
				end(it.req)
			}
		}
	}
}

// send sends the request desc describes; do applies it on the zkmem
// connection. size is what the request weighs beyond its path.
func (c *Conn) send(ctx context.Context, desc zkmem.Request, size int, do func(ctx context.Context, zc *zkmem.Conn) result) result {
	return c.sendAs(ctx, desc.Op.String(), desc, size, do)
}

// sendAs is send for a request the trace names name.
func (c *Conn) sendAs(ctx context.Context, name string, desc zkmem.Request, size int, do func(ctx context.Context, zc *zkmem.Conn) result) result {
	return c.call(ctx, name, &desc, len(desc.Path)+size, do)
}

// Create implements zksim.Conn.
func (c *Conn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	data = slices.Clone(data)
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpCreate, Path: path, Data: data, Mode: mode, ACL: acl, TTL: -1}, len(data), func(ctx context.Context, zc *zkmem.Conn) result {
		p, err := zc.Create(ctx, path, data, mode, acl)
		return result{path: p, err: err}
	})
	return r.path, r.err
}

// CreateTTL implements zksim.Conn.
func (c *Conn) CreateTTL(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl time.Duration) (string, error) {
	data = slices.Clone(data)
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpCreate, Path: path, Data: data, Mode: mode, ACL: acl, TTL: ttl}, len(data), func(ctx context.Context, zc *zkmem.Conn) result {
		p, err := zc.CreateTTL(ctx, path, data, mode, acl, ttl)
		return result{path: p, err: err}
	})
	return r.path, r.err
}

// Delete implements zksim.Conn.
func (c *Conn) Delete(ctx context.Context, path string, version int32) error {
	return c.send(ctx, zkmem.Request{Op: zkmem.OpDelete, Path: path, Version: version}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		return result{err: zc.Delete(ctx, path, version)}
	}).err
}

// Exists implements zksim.Conn.
func (c *Conn) Exists(ctx context.Context, path string) (bool, *zksim.Stat, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpExists, Path: path}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		ok, st, err := zc.Exists(ctx, path)
		return result{ok: ok, stat: st, err: err}
	})
	return r.ok, r.stat, r.err
}

// ExistsW implements zksim.Conn.
func (c *Conn) ExistsW(ctx context.Context, path string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpExists, Path: path, Watch: true}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		ok, st, ch, err := zc.ExistsW(ctx, path)
		return result{ok: ok, stat: st, ch: ch, err: err}
	})
	return r.ok, r.stat, r.ch, r.err
}

// Get implements zksim.Conn.
func (c *Conn) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpGetData, Path: path}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		data, st, err := zc.Get(ctx, path)
		return result{data: data, stat: st, err: err}
	})
	return r.data, r.stat, r.err
}

// GetW implements zksim.Conn.
func (c *Conn) GetW(ctx context.Context, path string) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpGetData, Path: path, Watch: true}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		data, st, ch, err := zc.GetW(ctx, path)
		return result{data: data, stat: st, ch: ch, err: err}
	})
	return r.data, r.stat, r.ch, r.err
}

// Set implements zksim.Conn.
func (c *Conn) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	data = slices.Clone(data)
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpSetData, Path: path, Data: data, Version: version}, len(data), func(ctx context.Context, zc *zkmem.Conn) result {
		st, err := zc.Set(ctx, path, data, version)
		return result{stat: st, err: err}
	})
	return r.stat, r.err
}

// Children implements zksim.Conn. The names come in the simulator's
// canonical order (by sequence number, then name), or shuffled by a fault.
func (c *Conn) Children(ctx context.Context, path string) ([]string, *zksim.Stat, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpGetChildren, Path: path}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		names, st, err := zc.Children(ctx, path)
		return result{names: names, stat: st, err: err}
	})
	return r.names, r.stat, r.err
}

// ChildrenW implements zksim.Conn.
func (c *Conn) ChildrenW(ctx context.Context, path string) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpGetChildren, Path: path, Watch: true}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		names, st, ch, err := zc.ChildrenW(ctx, path)
		return result{names: names, stat: st, ch: ch, err: err}
	})
	return r.names, r.stat, r.ch, r.err
}

// Multi implements zksim.Conn.
func (c *Conn) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	ops = slices.Clone(ops)
	path, size := "", 0
	for i, op := range ops {
		if i == 0 {
			path = op.OpPath()
		}
		size += len(op.OpPath())
		switch o := op.(type) {
		case *zksim.CreateOp:
			size += len(o.Data)
		case *zksim.SetOp:
			size += len(o.Data)
		}
	}
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpMulti, Path: path, Ops: ops}, size-len(path), func(ctx context.Context, zc *zkmem.Conn) result {
		res, err := zc.Multi(ctx, ops...)
		return result{ops: res, err: err}
	})
	return r.ops, r.err
}

// Sync implements zksim.Conn.
func (c *Conn) Sync(ctx context.Context, path string) (string, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpSync, Path: path}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		p, err := zc.Sync(ctx, path)
		return result{path: p, err: err}
	})
	return r.path, r.err
}

// GetACL implements zksim.Conn.
func (c *Conn) GetACL(ctx context.Context, path string) ([]zksim.ACL, *zksim.Stat, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpGetACL, Path: path}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		acl, st, err := zc.GetACL(ctx, path)
		return result{acl: acl, stat: st, err: err}
	})
	return r.acl, r.stat, r.err
}

// SetACL implements zksim.Conn.
func (c *Conn) SetACL(ctx context.Context, path string, acl []zksim.ACL, version int32) (*zksim.Stat, error) {
	acl = slices.Clone(acl)
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpSetACL, Path: path, ACL: acl, Version: version}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		st, err := zc.SetACL(ctx, path, acl, version)
		return result{stat: st, err: err}
	})
	return r.stat, r.err
}

// AddAuth implements zksim.Conn.
func (c *Conn) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	auth = slices.Clone(auth)
	return c.send(ctx, zkmem.Request{Op: zkmem.OpAddAuth, AuthScheme: scheme, Auth: auth}, len(scheme)+len(auth), func(ctx context.Context, zc *zkmem.Conn) result {
		return result{err: zc.AddAuth(ctx, scheme, auth)}
	}).err
}

// AddWatch implements zksim.PersistentWatcher.
func (c *Conn) AddWatch(ctx context.Context, path string, mode zksim.AddWatchMode) (<-chan zksim.Event, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpAddWatch, Path: path, AddWatchMode: mode}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		ch, err := zc.AddWatch(ctx, path, mode)
		return result{ch: ch, err: err}
	})
	return r.ch, r.err
}

// RemoveWatches implements zksim.PersistentWatcher.
func (c *Conn) RemoveWatches(ctx context.Context, path string, kind zksim.WatcherKind) error {
	return c.send(ctx, zkmem.Request{Op: zkmem.OpRemoveWatches, Path: path, WatcherKind: kind}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		return result{err: zc.RemoveWatches(ctx, path, kind)}
	}).err
}

// GetEphemerals implements zksim.EphemeralsLister.
func (c *Conn) GetEphemerals(ctx context.Context, prefix string) ([]string, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpGetEphemerals, Path: prefix}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		paths, err := zc.GetEphemerals(ctx, prefix)
		return result{names: paths, err: err}
	})
	return r.names, r.err
}

// GetAllChildrenNumber implements zksim.ChildCounter.
func (c *Conn) GetAllChildrenNumber(ctx context.Context, path string) (int32, error) {
	r := c.send(ctx, zkmem.Request{Op: zkmem.OpGetAllChildrenNumber, Path: path}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		n, err := zc.GetAllChildrenNumber(ctx, path)
		return result{count: n, err: err}
	})
	return r.count, r.err
}

// opClose is the name the trace gives a Close.
const opClose = "close"

// Close implements zksim.Conn. It is a request like any other: the session
// ends when the scheduler applies it, and Close returns when its reply is
// delivered (at once if the Conn is already closed or the World is).
func (c *Conn) Close() error {
	c.mu.Lock()
	finished := c.finished
	c.mu.Unlock()
	if finished {
		return nil
	}
	r := c.sendAs(context.Background(), opClose, zkmem.Request{Op: zkmem.OpCloseSession}, 0, func(ctx context.Context, zc *zkmem.Conn) result {
		return result{err: zc.Close()}
	})
	if r.err == zksim.ErrClosing {
		return nil
	}
	return r.err
}

// SessionID implements zksim.Conn.
func (c *Conn) SessionID() int64 { return c.s.zc.SessionID() }

// SessionTimeout implements zksim.Conn.
func (c *Conn) SessionTimeout() time.Duration { return c.s.zc.SessionTimeout() }

// State implements zksim.Conn: the last state the client was told of.
func (c *Conn) State() zksim.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// SessionEvents implements zksim.Conn. Events arrive when the scheduler
// delivers them from the session's FIFO.
func (c *Conn) SessionEvents(ctx context.Context) <-chan zksim.Event {
	p := pump.New(0, ctx.Done(), nil) // closed at finish or when ctx is done
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		p.Finish(nil)
	} else {
		c.subs = append(c.subs, p)
	}
	return p.Out()
}

// publish tells the client of a state change.
func (c *Conn) publish(st zksim.State) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return
	}
	c.state = st
	ev := zksim.Event{Type: zksim.EventSession, State: st}
	live := c.subs[:0]
	for _, p := range c.subs {
		if p.Push(ev) {
			live = append(live, p)
		}
	}
	clear(c.subs[len(live):])
	c.subs = live
}

// finish ends the Conn for its client: session-event channels close.
func (c *Conn) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return
	}
	c.finished = true
	c.state = zksim.StateClosed
	for _, p := range c.subs {
		p.Finish(nil)
	}
	c.subs = nil
}
