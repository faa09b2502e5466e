package zkmem

import (
	"context"
	"sort"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/pump"
)

// The client side of watches: like ZooKeeper's ZKWatchManager, the Conn
// keeps the channels each watch was set for and fans one server event out
// to all of them.

// pumpBuffer is the buffer of the channels of session-event subscribers and
// persistent watches, which their pumps fill from the queue. That slot lets
// the Conn's close hand a reader who has kept up a last event without
// waiting for it (see pump.Pump.CloseWith).
const pumpBuffer = 1

// persistentSub is one channel returned by AddWatch.
type persistentSub struct {
	mode zksim.AddWatchMode
	p    *pump.Pump
}

// register adds a one-shot channel for path to m. Called with srv.mu held.
func (c *Conn) register(m map[string][]chan zksim.Event, path string) chan zksim.Event {
	ch := make(chan zksim.Event, 1)
	c.mu.Lock()
	m[path] = append(m[path], ch)
	c.mu.Unlock()
	return ch
}

func fireAll(m map[string][]chan zksim.Event, path string, ev zksim.Event) {
	for _, ch := range m[path] {
		ch <- ev
		close(ch)
	}
	delete(m, path)
}

// receive materialises a watch event from the server (ZKWatchManager.
// materialize). Called with srv.mu held, so events reach the client before
// any reply the server produces later.
func (c *Conn) receive(ev zksim.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == zksim.StateClosed || c.state == zksim.StateExpired || c.state == zksim.StateAuthFailed {
		return
	}
	p := ev.Path
	switch ev.Type {
	case zksim.EventNodeCreated, zksim.EventNodeDataChanged:
		fireAll(c.dataW, p, ev)
		fireAll(c.existW, p, ev)
	case zksim.EventNodeChildrenChanged:
		fireAll(c.childW, p, ev)
	case zksim.EventNodeDeleted:
		fireAll(c.dataW, p, ev)
		fireAll(c.existW, p, ev)
		fireAll(c.childW, p, ev)
	}
	if len(c.persistent) == 0 {
		return
	}
	for _, sub := range c.persistent[p] {
		if sub.mode == zksim.WatchPersistent || ev.Type != zksim.EventNodeChildrenChanged {
			sub.p.Push(ev)
		}
	}
	if ev.Type == zksim.EventNodeChildrenChanged {
		return
	}
	for a := p; a != "/"; {
		a = parentPath(a)
		for _, sub := range c.persistent[a] {
			if sub.mode == zksim.WatchPersistentRecursive {
				sub.p.Push(ev)
			}
		}
	}
}

// SessionEvents implements zksim.Conn.
func (c *Conn) SessionEvents(ctx context.Context) <-chan zksim.Event {
	p := pump.New(pumpBuffer, ctx.Done(), c.closed)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == zksim.StateClosed {
		p.Finish(nil)
	} else {
		c.subs = append(c.subs, p)
	}
	return p.Out()
}

// publish tells every session-event subscriber of a state change. Called
// with c.mu held.
func (c *Conn) publish(st zksim.State) {
	if st == zksim.StateConnected || st == zksim.StateConnectedReadOnly {
		c.conns++
	}
	c.state = st
	ev := zksim.Event{Type: zksim.EventSession, State: st}
	live := c.subs[:0]
	for _, p := range c.subs {
		if p.Push(ev) { // else the subscriber went away
			live = append(live, p)
		}
	}
	clear(c.subs[len(live):])
	c.subs = live
}

// endWatches ends every watch of the Conn with EventNotWatching. Called with
// c.mu held.
func (c *Conn) endWatches(st zksim.State, err error) {
	ev := zksim.Event{Type: zksim.EventNotWatching, State: st, Err: err}
	for _, m := range []map[string][]chan zksim.Event{c.dataW, c.existW, c.childW} {
		for _, path := range sortedKeys(m) {
			ev.Path = path
			fireAll(m, path, ev)
		}
	}
	for _, path := range sortedKeys(c.persistent) {
		ev.Path = path
		for _, sub := range c.persistent[path] {
			e := ev
			sub.p.Finish(&e)
		}
		delete(c.persistent, path)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AddWatch implements zksim.PersistentWatcher.
func (c *Conn) AddWatch(ctx context.Context, path string, mode zksim.AddWatchMode) (<-chan zksim.Event, error) {
	if err := zksim.ValidatePath(path, false); err != nil {
		return nil, err
	}
	if mode != zksim.WatchPersistent && mode != zksim.WatchPersistentRecursive {
		return nil, zksim.ErrBadArguments
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpAddWatch, Path: path, AddWatchMode: mode}, &resp)
	if err != nil {
		return nil, err
	}
	return resp.sub.p.Out(), nil
}

// RemoveWatches implements zksim.PersistentWatcher. As with ZooKeeper's
// client, the watches are looked for on the client first: with none of the
// kind on path the call fails with ErrNoWatcher without reaching the server.
func (c *Conn) RemoveWatches(ctx context.Context, path string, kind zksim.WatcherKind) error {
	if err := zksim.ValidatePath(path, false); err != nil {
		return err
	}
	if kind < zksim.WatcherChildren || kind > zksim.WatcherPersistentRecursive {
		return zksim.ErrBadArguments
	}
	c.mu.Lock()
	has := c.hasWatches(path, kind)
	c.mu.Unlock()
	if !has {
		if err := stateErr(c.State()); err != nil {
			return err
		}
		return zksim.ErrNoWatcher
	}
	var resp Response
	err := c.do(ctx, &Request{Op: OpRemoveWatches, Path: path, WatcherKind: kind}, &resp)
	if err != nil && len(resp.removed) == 0 {
		return err
	}
	if resp.Fault != NoFault {
		return err
	}
	for _, r := range resp.removed {
		ev := zksim.Event{Type: r.event, State: zksim.StateConnected, Path: path}
		if r.ch != nil {
			r.ch <- ev
			close(r.ch)
		} else {
			r.sub.p.Finish(&ev)
		}
	}
	return nil
}

// hasWatches reports whether RemoveWatches(path, kind) has anything to
// remove on the client. Called with c.mu held.
func (c *Conn) hasWatches(path string, kind zksim.WatcherKind) bool {
	persistent := func(match func(zksim.AddWatchMode) bool) bool {
		for _, sub := range c.persistent[path] {
			if match(sub.mode) {
				return true
			}
		}
		return false
	}
	isPersistent := func(m zksim.AddWatchMode) bool { return m == zksim.WatchPersistent }
	switch kind {
	case zksim.WatcherChildren:
		return len(c.childW[path]) > 0 || persistent(isPersistent)
	case zksim.WatcherData:
		return len(c.dataW[path]) > 0 || len(c.existW[path]) > 0 || persistent(isPersistent)
	case zksim.WatcherAny:
		return len(c.childW[path]) > 0 || len(c.dataW[path]) > 0 || len(c.existW[path]) > 0 || len(c.persistent[path]) > 0
	case zksim.WatcherPersistent:
		return persistent(isPersistent)
	case zksim.WatcherPersistentRecursive:
		return persistent(func(m zksim.AddWatchMode) bool { return m == zksim.WatchPersistentRecursive })
	}
	return false
}

type removedWatch struct {
	ch    chan zksim.Event
	sub   *persistentSub
	event zksim.EventType
}

// takeWatches removes from the client the watches RemoveWatches removes
// (ZKWatchManager.removeWatcher). Called with c.mu held.
func (c *Conn) takeWatches(path string, kind zksim.WatcherKind) []removedWatch {
	var out []removedWatch
	take := func(m map[string][]chan zksim.Event, ev zksim.EventType) {
		for _, ch := range m[path] {
			out = append(out, removedWatch{ch: ch, event: ev})
		}
		delete(m, path)
	}
	takePersistent := func(match func(zksim.AddWatchMode) bool) {
		kept := c.persistent[path][:0]
		for _, sub := range c.persistent[path] {
			if match(sub.mode) {
				out = append(out, removedWatch{sub: sub, event: zksim.EventPersistentWatchRemoved})
			} else {
				kept = append(kept, sub)
			}
		}
		if len(kept) == 0 {
			delete(c.persistent, path)
		} else {
			c.persistent[path] = kept
		}
	}
	isPersistent := func(m zksim.AddWatchMode) bool { return m == zksim.WatchPersistent }
	switch kind {
	case zksim.WatcherChildren:
		take(c.childW, zksim.EventChildWatchRemoved)
		takePersistent(isPersistent)
	case zksim.WatcherData:
		take(c.dataW, zksim.EventDataWatchRemoved)
		take(c.existW, zksim.EventDataWatchRemoved)
		takePersistent(isPersistent)
	case zksim.WatcherAny:
		take(c.childW, zksim.EventChildWatchRemoved)
		take(c.dataW, zksim.EventDataWatchRemoved)
		take(c.existW, zksim.EventDataWatchRemoved)
		takePersistent(func(zksim.AddWatchMode) bool { return true })
	case zksim.WatcherPersistent:
		takePersistent(isPersistent)
	case zksim.WatcherPersistentRecursive:
		takePersistent(func(m zksim.AddWatchMode) bool { return m == zksim.WatchPersistentRecursive })
	}
	return out
}

// setWatches re-registers a reconnecting client's watches relative to the
// last zxid it saw (DataTree.setWatches). Called with srv.mu held.
func (s *Server) setWatches(sess *Session, rel int64, data, exist, child, persistent, recursive []string) {
	notify := func(typ zksim.EventType, path string) {
		sess.notify(zksim.Event{Type: typ, State: zksim.StateConnected, Path: path}, s.zxid)
	}
	for _, p := range data {
		n := s.tree.get(p)
		switch {
		case n == nil:
			notify(zksim.EventNodeDeleted, p)
		case n.mzxid > rel:
			notify(zksim.EventNodeDataChanged, p)
		default:
			sess.addWatch(s.dataWatches, p, modeStandard)
		}
	}
	for _, p := range exist {
		if s.tree.get(p) != nil {
			notify(zksim.EventNodeCreated, p)
		} else {
			sess.addWatch(s.dataWatches, p, modeStandard)
		}
	}
	for _, p := range child {
		n := s.tree.get(p)
		switch {
		case n == nil:
			notify(zksim.EventNodeDeleted, p)
		case n.pzxid > rel:
			notify(zksim.EventNodeChildrenChanged, p)
		default:
			sess.addWatch(s.childWatches, p, modeStandard)
		}
	}
	for _, p := range persistent {
		sess.addWatch(s.childWatches, p, modePersistent)
		sess.addWatch(s.dataWatches, p, modePersistent)
	}
	for _, p := range recursive {
		sess.addWatch(s.childWatches, p, modeRecursive)
		sess.addWatch(s.dataWatches, p, modeRecursive)
	}
}

// watchPaths lists the client's watches by the setWatches categories, each
// sorted. Called with c.mu held.
func (c *Conn) watchPaths() (data, exist, child, persistent, recursive []string) {
	data, exist, child = sortedKeys(c.dataW), sortedKeys(c.existW), sortedKeys(c.childW)
	for _, p := range sortedKeys(c.persistent) {
		var hasP, hasR bool
		for _, sub := range c.persistent[p] {
			if sub.mode == zksim.WatchPersistent {
				hasP = true
			} else {
				hasR = true
			}
		}
		if hasP {
			persistent = append(persistent, p)
		}
		if hasR {
			recursive = append(recursive, p)
		}
	}
	return
}
