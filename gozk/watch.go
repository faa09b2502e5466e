package gozk

import (
	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
)

// watchKind is the client-side table a watch lives in, as in ZooKeeper's
// client (ZKWatchManager) and go-zookeeper: getData and an exists that found
// the node set a data watch, an exists that did not find it an exist watch,
// getChildren a child watch.
type watchKind uint8

const (
	watchData watchKind = iota
	watchExist
	watchChild
)

type watchKey struct {
	path string
	kind watchKind
}

// firedKinds lists the watch tables a node event fires, by the Java client's
// rules (ZKWatchManager.materialize): NodeCreated and NodeDataChanged fire
// data and exist watches, NodeChildrenChanged child watches, NodeDeleted
// all three. go-zookeeper fires only exist watches on NodeCreated; the
// difference shows when the server silently dropped an event a data watch
// was waiting for (the watcher lacked READ on the node), so that the watch
// is still pending when the node is created again.
func firedKinds(t zk.EventType) []watchKind {
	switch t {
	case zk.EventNodeCreated, zk.EventNodeDataChanged:
		return []watchKind{watchData, watchExist}
	case zk.EventNodeChildrenChanged:
		return []watchKind{watchChild}
	case zk.EventNodeDeleted:
		return []watchKind{watchData, watchExist, watchChild}
	}
	return nil
}

// forwarder is the zksim side of one go-zookeeper watch channel.
type forwarder struct {
	key  watchKey
	out  chan zksim.Event // capacity 1: receives exactly one Event, then closed
	done bool             // guarded by Conn.wmu
}

// forward turns a go-zookeeper watch channel into a zksim one, which
// receives exactly one Event and is then closed.
//
// Node events are delivered from go-zookeeper's event callback, which runs
// on its receive loop before it handles anything the server sent later: so
// a watch event is on its channel before any later reply returns, as
// ZooKeeper promises ("a client sees a watch event before it sees the data
// that changed"). An event that arrived before the channel was registered
// here, and the EventNotWatching go-zookeeper sends when the watch can no
// longer fire, come through the go-zookeeper channel, which a goroutine
// drains until go-zookeeper closes it.
//
// forward is called only from inside a registered call, so adding to
// c.calls cannot race with Close's wait.
func (c *Conn) forward(zch <-chan zk.Event, path string, kind watchKind) <-chan zksim.Event {
	f := &forwarder{key: watchKey{path, kind}, out: make(chan zksim.Event, 1)}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case ev, ok := <-zch:
		// go-zookeeper sends one event per channel: nothing to drain.
		c.deliverLocked(f, ev, ok)
		return f.out
	default:
	}
	c.watches[f.key] = append(c.watches[f.key], f)
	c.calls.Add(1)
	go c.drain(f, zch)
	return f.out
}

// drain waits for go-zookeeper's event on zch and delivers it, unless the
// event callback delivered one first.
func (c *Conn) drain(f *forwarder, zch <-chan zk.Event) {
	defer c.calls.Done()
	ev, ok := <-zch
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if f.done {
		return
	}
	c.unregisterLocked(f)
	c.deliverLocked(f, ev, ok)
}

// onWatchEvent delivers a node event to every registered channel it fires.
// It runs on go-zookeeper's receive loop.
func (c *Conn) onWatchEvent(ev zk.Event) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for _, kind := range firedKinds(ev.Type) {
		key := watchKey{ev.Path, kind}
		for _, f := range c.watches[key] {
			c.deliverLocked(f, ev, true)
		}
		delete(c.watches, key)
	}
}

func (c *Conn) unregisterLocked(f *forwarder) {
	list := c.watches[f.key]
	for i, g := range list {
		if g == f {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(c.watches, f.key)
	} else {
		c.watches[f.key] = list
	}
}

// deliverLocked sends the forwarder its one event and closes its channel.
// ok false means go-zookeeper closed its channel without an event.
func (c *Conn) deliverLocked(f *forwarder, ev zk.Event, ok bool) {
	if !ok {
		ev = zk.Event{Type: zk.EventNotWatching, Path: f.key.path, Err: zk.ErrClosing}
	}
	f.done = true
	f.out <- c.watchEvent(ev)
	close(f.out)
}

// watchEvent maps a go-zookeeper watch event. A node event carries the
// state the server sent (SyncConnected, which is zksim.StateConnected). An
// EventNotWatching carries the reason as Err (zksim.ErrSessionExpired or
// zksim.ErrClosing) and the matching state (StateExpired or StateClosed).
func (c *Conn) watchEvent(ev zk.Event) zksim.Event {
	out := zksim.Event{Type: zksim.EventType(ev.Type), State: zksim.State(ev.State), Path: ev.Path}
	if ev.Type != zk.EventNotWatching {
		return out
	}
	out.Err = c.mapErr(ev.Err)
	if out.Err == nil {
		out.Err = zksim.ErrClosing
	}
	switch {
	case out.Err == zksim.ErrSessionExpired:
		out.State = zksim.StateExpired
	default:
		out.State = zksim.StateClosed
	}
	return out
}
