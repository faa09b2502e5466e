package explore

import (
	"cmp"
	"context"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zksim/zksim"
)

// spinLimit bounds the calls the recipes of a machine may make on their
// Conns with their context done, or once the run has ended (every
// operation cancelled and the World closed). Such a call fails at once,
// without a step of the simulator; a recipe that retries such a failure
// without end (it drops the error) spins, and the check would never end:
// past the limit the machine records a livelock and the call blocks for
// good, so the check fails (the bubble deadlocks at the latest when the
// run ends). A recipe that gives up on a done context or ErrClosing makes
// a few such calls per operation; a check has a few dozen.
const spinLimit = 10000

// guardedConn is the Conn a machine hands its recipes: client c's
// simulated Conn, with the spin guard on the calls the recipes make.
type guardedConn struct {
	zksim.Conn
	w     *world
	idx   int        // the client's index
	bound *spinBound // nil: the machine's, spinLimit for all its Conns
}

// spinBound is what a spin guard allows: calls that cannot be sent (their
// context done, or the run ended), at most limit of them, counted in
// idle; calls counts every call. The machine's bound is spinLimit, shared
// by its recipes' Conns; a Conn that serves one call the machine makes
// itself (the election API's) can have a tighter one of its own
// (newBoundConn).
type spinBound struct {
	limit int64  // 0: spinLimit
	who   string // who spins, for the violation
	// exit: past the limit, end the calling goroutine (runtime.Goexit,
	// which runs its defers) rather than block it for good: for a call on
	// a goroutine the machine started, which then reports its end.
	exit  bool
	idle  atomic.Int64
	calls atomic.Int64
}

// RandReader implements zksim.RandSource: the wrapped Conn's stream, so
// that the recipes' GUIDs replay with the seed.
func (g guardedConn) RandReader() io.Reader { return zksim.RandReader(g.Conn) }

// newBoundConn returns client c's Conn sc guarded by a bound of its own:
// at most limit calls with a done context by who.
func newBoundConn(c *client, sc zksim.Conn, limit int64, who string) (guardedConn, *spinBound) {
	b := &spinBound{limit: limit, who: who, exit: true}
	return guardedConn{Conn: sc, w: c.w, idx: c.idx, bound: b}, b
}

// guard lets a call with ctx through, unless it is one of more than the
// bound's limit (spinLimit) made with a done context or after the run
// ended.
func (g guardedConn) guard(ctx context.Context) {
	b := g.bound
	if b == nil {
		b = &g.w.spins
	}
	b.calls.Add(1)
	limit := cmp.Or(b.limit, spinLimit)
	ended := g.w.ctx.Err() != nil // the check has ended
	if (!ended && ctx.Err() == nil) || b.idle.Add(1) <= limit {
		return
	}
	if !ended {
		g.w.violate(kindLivelock, "%s made more than %d calls that could not be sent (its context done)", cmp.Or(b.who, "a client"), limit)
	}
	if b.exit {
		runtime.Goexit()
	}
	select {} // see spinLimit
}

// recipeConn returns the Conn the recipes of client c use.
func (c *client) recipeConn() zksim.Conn { return guardedConn{Conn: c.conn, w: c.w, idx: c.idx} }

type spinCounters struct {
	spins spinBound // the machine's, for its recipes' Conns

	sentMu sync.Mutex
	sentBy map[sentKey]int // a client's delete of a path -> the machine's call that sent it last
}

// sentKey is a client's delete of one path.
type sentKey struct {
	client int
	path   string
}

// callKey is the context key of the machine's id of the operation a
// recipe call serves (withCall).
type callKey struct{}

// withCall marks ctx as the context of the machine's operation id, so
// that the deletes the recipe sends under it are attributed to it
// (world.sender), even when the server applies them after the operation
// has returned.
func withCall(ctx context.Context, id int) context.Context {
	return context.WithValue(ctx, callKey{}, id)
}

// sent records the deletes of paths that client idx sends under ctx.
func (w *world) sent(ctx context.Context, idx int, paths ...string) {
	id, ok := ctx.Value(callKey{}).(int)
	if !ok {
		return
	}
	w.sentMu.Lock()
	defer w.sentMu.Unlock()
	if w.sentBy == nil {
		w.sentBy = map[sentKey]int{}
	}
	for _, p := range paths {
		w.sentBy[sentKey{idx, p}] = id
	}
}

// sender returns the operation under which client idx last sent a delete
// of path.
func (w *world) sender(idx int, path string) (int, bool) {
	w.sentMu.Lock()
	defer w.sentMu.Unlock()
	id, ok := w.sentBy[sentKey{idx, path}]
	return id, ok
}

func (g guardedConn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	g.guard(ctx)
	return g.Conn.Create(ctx, path, data, mode, acl)
}

func (g guardedConn) CreateTTL(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl time.Duration) (string, error) {
	g.guard(ctx)
	return g.Conn.CreateTTL(ctx, path, data, mode, acl, ttl)
}

func (g guardedConn) Delete(ctx context.Context, path string, version int32) error {
	g.guard(ctx)
	g.w.sent(ctx, g.idx, path)
	return g.Conn.Delete(ctx, path, version)
}

func (g guardedConn) Exists(ctx context.Context, path string) (bool, *zksim.Stat, error) {
	g.guard(ctx)
	return g.Conn.Exists(ctx, path)
}

func (g guardedConn) ExistsW(ctx context.Context, path string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	g.guard(ctx)
	return g.Conn.ExistsW(ctx, path)
}

func (g guardedConn) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	g.guard(ctx)
	return g.Conn.Get(ctx, path)
}

func (g guardedConn) GetW(ctx context.Context, path string) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	g.guard(ctx)
	return g.Conn.GetW(ctx, path)
}

func (g guardedConn) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	g.guard(ctx)
	return g.Conn.Set(ctx, path, data, version)
}

func (g guardedConn) Children(ctx context.Context, path string) ([]string, *zksim.Stat, error) {
	g.guard(ctx)
	return g.Conn.Children(ctx, path)
}

func (g guardedConn) ChildrenW(ctx context.Context, path string) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	g.guard(ctx)
	return g.Conn.ChildrenW(ctx, path)
}

func (g guardedConn) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	g.guard(ctx)
	for _, op := range ops {
		if d, ok := op.(*zksim.DeleteOp); ok {
			g.w.sent(ctx, g.idx, d.Path)
		}
	}
	return g.Conn.Multi(ctx, ops...)
}

func (g guardedConn) Sync(ctx context.Context, path string) (string, error) {
	g.guard(ctx)
	return g.Conn.Sync(ctx, path)
}
