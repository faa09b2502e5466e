package benchmarks

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zksim/zksim"
)

// Counts is what the clients of one run did, summed over every client.
type Counts struct {
	Notifications int64 // watch events delivered (EventNotWatching left out)
	Reads         int64 // getChildren, getData and exists calls
	ReplyBytes    int64 // jute-encoded size of the replies to those reads
	Writes        int64 // create, delete, setData and multi calls
}

// Sub returns c minus d.
func (c Counts) Sub(d Counts) Counts {
	return Counts{
		Notifications: c.Notifications - d.Notifications,
		Reads:         c.Reads - d.Reads,
		ReplyBytes:    c.ReplyBytes - d.ReplyBytes,
		Writes:        c.Writes - d.Writes,
	}
}

// counters holds Counts shared by many clients and goroutines.
type counters struct {
	notifications, reads, replyBytes, writes atomic.Int64
}

func (c *counters) snapshot() Counts {
	return Counts{
		Notifications: c.notifications.Load(),
		Reads:         c.reads.Load(),
		ReplyBytes:    c.replyBytes.Load(),
		Writes:        c.writes.Load(),
	}
}

// Sizes of the jute encoding of a reply, for ReplyBytes: every reply has a
// header (xid, zxid, err); a Stat is 68 bytes; a string or byte buffer is
// its length prefix plus its bytes; a vector of strings is a count plus the
// strings.
const (
	replyHeaderBytes = 16
	statBytes        = 68
	lengthBytes      = 4
)

// countingConn is a zksim.Conn that counts what passes through it into a
// shared counters. Every watch channel it hands out is fed by a small
// goroutine that counts the event as it forwards it; the goroutine ends with
// the watch (watch channels are one-shot).
//
// With a gate, a countingConn starts without a connection: its first call
// must be a Create, which waits at the gate until the gate binds it to a
// connection and lets it through.
type countingConn struct {
	zksim.Conn // set by the gate when there is one
	c          *counters
	gate       *createGate
	slot       int // which candidate uses it
}

// SessionID is 0 until the gate binds cc to a connection, as for a Conn
// with no session yet (the recipes take the first session it gets).
func (cc *countingConn) SessionID() int64 {
	if cc.Conn == nil {
		return 0
	}
	return cc.Conn.SessionID()
}

func (cc *countingConn) read(bytes int64) {
	cc.c.reads.Add(1)
	cc.c.replyBytes.Add(replyHeaderBytes + bytes)
}

func (cc *countingConn) watch(in <-chan zksim.Event) <-chan zksim.Event {
	if in == nil {
		return nil
	}
	out := make(chan zksim.Event, 1)
	go func() {
		defer close(out)
		ev, ok := <-in
		if !ok {
			return
		}
		if ev.Type != zksim.EventNotWatching {
			cc.c.notifications.Add(1)
		}
		out <- ev
	}()
	return out
}

func childrenBytes(names []string, st *zksim.Stat) int64 {
	n := int64(lengthBytes)
	for _, name := range names {
		n += lengthBytes + int64(len(name))
	}
	if st != nil {
		n += statBytes
	}
	return n
}

func dataBytes(data []byte, st *zksim.Stat) int64 {
	if st == nil {
		return 0
	}
	return lengthBytes + int64(len(data)) + statBytes
}

func existsBytes(ok bool) int64 {
	if !ok {
		return 0
	}
	return statBytes
}

func (cc *countingConn) Children(ctx context.Context, p string) ([]string, *zksim.Stat, error) {
	names, st, err := cc.Conn.Children(ctx, p)
	cc.read(childrenBytes(names, st))
	return names, st, err
}

func (cc *countingConn) ChildrenW(ctx context.Context, p string) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	names, st, w, err := cc.Conn.ChildrenW(ctx, p)
	cc.read(childrenBytes(names, st))
	return names, st, cc.watch(w), err
}

func (cc *countingConn) Get(ctx context.Context, p string) ([]byte, *zksim.Stat, error) {
	data, st, err := cc.Conn.Get(ctx, p)
	cc.read(dataBytes(data, st))
	return data, st, err
}

func (cc *countingConn) GetW(ctx context.Context, p string) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	data, st, w, err := cc.Conn.GetW(ctx, p)
	cc.read(dataBytes(data, st))
	return data, st, cc.watch(w), err
}

func (cc *countingConn) Exists(ctx context.Context, p string) (bool, *zksim.Stat, error) {
	ok, st, err := cc.Conn.Exists(ctx, p)
	cc.read(existsBytes(ok))
	return ok, st, err
}

func (cc *countingConn) ExistsW(ctx context.Context, p string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	ok, st, w, err := cc.Conn.ExistsW(ctx, p)
	cc.read(existsBytes(ok))
	return ok, st, cc.watch(w), err
}

func (cc *countingConn) Create(ctx context.Context, p string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	cc.gate.pass(cc, p)
	cc.c.writes.Add(1)
	return cc.Conn.Create(ctx, p, data, mode, acl)
}

func (cc *countingConn) Delete(ctx context.Context, p string, version int32) error {
	cc.c.writes.Add(1)
	return cc.Conn.Delete(ctx, p, version)
}

func (cc *countingConn) Set(ctx context.Context, p string, data []byte, version int32) (*zksim.Stat, error) {
	cc.c.writes.Add(1)
	return cc.Conn.Set(ctx, p, data, version)
}

func (cc *countingConn) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	cc.c.writes.Add(1)
	return cc.Conn.Multi(ctx, ops...)
}

// createGate holds back the first create of every countingConn, so that
// the benchmark chooses the order in which the creates reach the server,
// and which client sends each.
type createGate struct {
	mu      sync.Mutex
	waiting []gatedCreate
}

// gatedCreate is a create held at the gate.
type gatedCreate struct {
	cc      *countingConn
	path    string
	release chan struct{}
}

// pass blocks the first create of cc, of path, until the gate lets it
// through; later creates pass at once.
func (g *createGate) pass(cc *countingConn, path string) {
	if g == nil || cc.Conn != nil {
		return
	}
	gc := gatedCreate{cc: cc, path: path, release: make(chan struct{})}
	g.mu.Lock()
	g.waiting = append(g.waiting, gc)
	g.mu.Unlock()
	<-gc.release
}

// held returns the creates held at the gate, sorted by path (stably: those
// with the same path in the order they came).
func (g *createGate) held() []gatedCreate {
	g.mu.Lock()
	defer g.mu.Unlock()
	held := g.waiting
	g.waiting = nil
	slices.SortStableFunc(held, func(a, b gatedCreate) int { return strings.Compare(a.path, b.path) })
	return held
}

// let binds the held create's countingConn to conn and lets the create
// through.
func (gc gatedCreate) let(conn zksim.Conn) {
	gc.cc.Conn = conn
	close(gc.release)
}
