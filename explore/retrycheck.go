package explore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// The retry timing of the recipes (recipes/internal/retry), checked on
// the virtual clock. A recipe call that fails with connection loss is
// repeated once the connection is back; from the second loss in a row on,
// it first backs off: 5 ms after the second, doubling after each further
// loss, at most 500 ms. A timedConn is a client's Conn as a recipe sees
// it: it times the calls, and records a violation when the same request
// (operation and path, under the same ctx: the cleanup that follows a
// retry that gave up, its ctx done or its session ended, may send the
// request again at once, under a ctx of its own) is repeated after k ≥ 2
// losses in a row
//
//   - sooner than backoff(k) after the last loss (any request: a recipe
//     may count more losses than the ones in a row, never fewer), unless
//     the session ended since (the retry gave up), or
//   - later than backoff(k) after the connection was back (only reads,
//     which every recipe repeats through retry.Do alone, so that the
//     pause is exactly the backoff).
//
// and when the first request after any connection loss comes later than
// backoff(n) after the recipe saw the connection back (read
// StateConnected: retry.WaitConnected returns then), n being the losses of the
// operation so far: a recipe goes on after a loss through retry.Pause
// (or retry.Do) alone, whose pause after its k-th loss in a row is
// backoff(k) and k ≤ n. This is what sees the first pause of the
// recipes' own retry loops (create, list, create again: the list in
// between hides the repeat from the check above): after an operation's
// first loss the next request leaves as soon as the connection is back
// (retry.Pause: "from the second loss on it also backs off"). And when the
// session ends (expires, is closed) while the recipe waits to retry, the
// retry gives up at once (retry.WaitConnected returns the session's
// error): a request after that, if any, leaves at that instant.
//
// It needs the calls of one Conn to come from one goroutine at a time, as
// in the barrier machines (one operation per client at a time), unless
// shared. A Conn that other goroutines use between the recipe calls to
// check (a SingleNode's hold tracker reads through it once it leads) is
// made by newCallConn: it checks only the requests, losses and State
// reads made during its call method, each call from a clean slate (so a
// SingleNode's Campaign and a protected create are checked as
// operations of their own).

// backoff is the pause before the repeat of a request after k losses in a
// row: none after the first, then 5 ms, 10 ms, ... up to 500 ms.
func backoff(k int) time.Duration {
	if k < 2 {
		return 0
	}
	return min(5*time.Millisecond<<min(k-2, 10), 500*time.Millisecond)
}

// timedConn wraps a client's Conn (its sim.Conn, or its sim.Renewing) to
// check the retry timing.
type timedConn struct {
	zksim.Conn
	w   *world
	idx int // the client's index
	// shared: the recipes also call the Conn from goroutines that do not
	// retry through recipes/internal/retry (a hold tracker re-verifies its
	// node on the next connection event, an operation may sit in a
	// backoff while another call loses its reply): only the bound on the
	// first request after a loss applies, not the checks of one request's
	// repeats or of the retry giving up at once.
	shared bool
	// what names the checked call in violations ("" for the operations
	// of a machine).
	what string
	// gated: only the requests, losses and State reads made while a call
	// is under way (on) count (newCallConn).
	gated bool
	// lateWatchEnd: the watch channels of a Renewing tell a watcher that
	// its watch ended with the expired session only once the Renewing
	// runs on its new session (see lateEnd).
	lateWatchEnd bool

	mu          sync.Mutex
	on          bool            // a call is under way (gated)
	last        string          // the last request: op and path
	lastCtx     context.Context // and its ctx: a retry loop repeats a request with the same ctx, a cleanup after it gave up (ctx done, session ended) with its own
	losses      int             // connection losses in a row of last
	lossAt      time.Duration   // when the last loss was returned
	connectedAt time.Duration   // when the Conn last became connected
	opLosses    int             // connection losses since the operation began
	afterLoss   bool            // the last request failed with connection loss
	mixed       bool            // this request's losses in a row followed one of another request of its ctx
	backAt      time.Duration   // when the recipe first read StateConnected since, or -1
	endAt       time.Duration   // when the session ended (expired, auth failed, closed), or -1
}

var _ zksim.Conn = (*timedConn)(nil)

// newTimedConn wraps c's Conn (its Renewing if it has one); it follows the
// Conn's state until the run ends.
func newTimedConn(w *world, c *client) *timedConn {
	var conn zksim.Conn = c.conn
	if c.renewing != nil {
		conn = c.renewing
	}
	tc := &timedConn{Conn: conn, w: w, idx: c.idx, connectedAt: -1, endAt: -1, lateWatchEnd: c.lateWatchEnd}
	tc.watch(w.ctx)
	return tc
}

// library returns the Conn c's process runs on: its Renewing if it has
// one, else its conn.
func (c *client) library() zksim.Conn {
	if c.renewing != nil {
		return c.renewing
	}
	return c.conn
}

// newCallConn wraps c's Conn for the recipe calls run through its call
// method, what naming them: only they are checked. It follows the Conn's
// state during each call.
func newCallConn(w *world, c *client, what string) *timedConn {
	return &timedConn{Conn: c.conn, w: w, idx: c.idx, what: what, gated: true, connectedAt: -1, endAt: -1}
}

// watch follows the Conn's state until ctx is done.
func (tc *timedConn) watch(ctx context.Context) {
	w := tc.w
	events := tc.Conn.SessionEvents(ctx)
	w.hw.Go(func() {
		for ev := range events {
			switch ev.State {
			case zksim.StateConnected:
				tc.mu.Lock()
				tc.connectedAt = w.sw.Now()
				tc.mu.Unlock()
			case zksim.StateExpired, zksim.StateAuthFailed:
				tc.ended()
			}
		}
		if ctx.Err() == nil && tc.Conn.State() == zksim.StateClosed {
			tc.ended() // closed, not the end of the run or call
		}
	})
}

// call runs one recipe call on a Conn made by newCallConn, checking its
// requests as an operation of their own: what the Conn saw before (losses,
// the end of its session) is not the call's.
func (tc *timedConn) call(run func() error) error {
	ctx, cancel := context.WithCancel(tc.w.ctx)
	tc.mu.Lock()
	tc.on, tc.connectedAt, tc.endAt = true, -1, -1
	tc.resetLocked()
	tc.watch(ctx) // subscribes before run sends anything
	tc.mu.Unlock()
	defer func() {
		cancel()
		tc.mu.Lock()
		tc.on = false
		tc.mu.Unlock()
	}()
	return run()
}

// off reports, with tc.mu held, that tc is gated and no call is under way:
// nothing is checked or noted.
func (tc *timedConn) off() bool { return tc.gated && !tc.on }

// ended notes when the session ended (the first time).
func (tc *timedConn) ended() {
	now := tc.w.sw.Now()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.endAt < 0 {
		tc.endAt = now
	}
}

// recipeConn is the Conn c's recipes run on: c's timedConn if it has one
// for its current session, else its Conn.
func recipeConn(c *client) zksim.Conn {
	if c.timed != nil && c.timed.Conn == c.conn {
		return c.timed
	}
	return c.conn
}

// resetTimed begins an operation of c on its timedConn, if any.
func resetTimed(c *client) {
	if c.timed != nil && c.timed.Conn == c.library() {
		c.timed.reset()
	}
}

// reset forgets the losses so far: an operation begins (the losses of a
// cancelled one are not the next one's).
func (tc *timedConn) reset() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.resetLocked()
}

// resetLocked is reset with tc.mu held.
func (tc *timedConn) resetLocked() {
	tc.last, tc.lastCtx, tc.losses = "", nil, 0
	tc.opLosses, tc.afterLoss, tc.mixed = 0, false, false
}

// RandReader implements zksim.RandSource: the wrapped Conn's stream (a sim
// client's, or a Renewing's current client's), so that the recipes' GUIDs
// replay with the seed.
func (tc *timedConn) RandReader() io.Reader { return zksim.RandReader(tc.Conn) }

// State implements zksim.Conn: it notes when the recipe first reads
// StateConnected after a connection loss.
func (tc *timedConn) State() zksim.State {
	st := tc.Conn.State()
	if st == zksim.StateConnected {
		now := tc.w.sw.Now()
		tc.mu.Lock()
		if tc.afterLoss && tc.backAt < 0 && !tc.off() {
			tc.backAt = now
		}
		tc.mu.Unlock()
	}
	return st
}

// begin checks the timing of a request about to be sent; read tells a
// request that the recipes repeat through retry.Do alone.
func (tc *timedConn) begin(ctx context.Context, key string, read bool) {
	now := tc.w.sw.Now()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.off() {
		return
	}
	if tc.afterLoss {
		tc.afterLoss = false
		// From when the recipe saw the connection back (retry's
		// WaitConnected returns on reading StateConnected).
		want := backoff(tc.opLosses)
		if !tc.shared && tc.backAt < 0 && tc.endAt >= 0 && now > tc.endAt {
			// The session ended while the recipe waited for the
			// connection: retry gives up at once with the session's
			// error (WaitConnected's doc), so whatever the operation
			// sends next (its cleanup's first try) leaves at that instant.
			tc.w.violate(kindRetriedAfterTheEnd, "%s sent %s %v after its session ended, which it learnt of while waiting to retry a connection loss; the retry gives up at once", tc.who(), key, now-tc.endAt)
		}
		if tc.backAt >= 0 && now > tc.backAt+want {
			tc.w.violate(kindRetriedTooLate, "%s sent %s %v after it saw its connection back, after %d connection losses in its operation; the pause is at most %v", tc.who(), key, now-tc.backAt, tc.opLosses, want)
		}
	}
	if tc.shared || key != tc.last || ctx != tc.lastCtx || tc.losses < 2 {
		return
	}
	if st := tc.Conn.State(); tc.endAt >= tc.lossAt || st == zksim.StateExpired || st == zksim.StateClosed || st == zksim.StateAuthFailed {
		// The session ended since the loss (the watcher may not have
		// heard yet: the state says so): the retry gave up at once, and
		// this is no repeat but what the recipe does next, which
		// leaves at once.
		return
	}
	want := backoff(tc.losses)
	if now < tc.lossAt+want {
		tc.w.violate(kindRetriedTooSoon, "%s repeated %s %v after its %d-th connection loss in a row; the backoff is %v", tc.who(), key, now-tc.lossAt, tc.losses, want)
	}
	if base := max(tc.lossAt, tc.connectedAt); read && !tc.mixed && tc.connectedAt >= 0 && now > base+want {
		tc.w.violate(kindRetriedTooLate, "%s repeated %s %v after its %d-th connection loss in a row and the connection's return; the backoff is %v", tc.who(), key, now-base, tc.losses, want)
	}
}

// who names the client, and the call if tc checks one, in violations.
func (tc *timedConn) who() string {
	if tc.what != "" {
		return fmt.Sprintf("p%d's %s", tc.idx, tc.what)
	}
	return fmt.Sprintf("p%d", tc.idx)
}

// end records the result of the request key.
func (tc *timedConn) end(ctx context.Context, key string, err error) {
	now := tc.w.sw.Now()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.off() {
		return
	}
	if !errors.Is(err, zksim.ErrConnectionLoss) {
		tc.last, tc.lastCtx, tc.losses = key, ctx, 0
		return
	}
	tc.opLosses++
	tc.afterLoss, tc.backAt = true, -1
	if key != tc.last || ctx != tc.lastCtx {
		// A loss of another request of the operation right before
		// (seqnode.DeleteOwned's exists and delete in one retry.Do): the
		// recipe's count of losses in a row may be larger than this
		// request's, so its pause longer (see begin).
		tc.mixed = ctx == tc.lastCtx && tc.losses > 0
		tc.losses = 0
	}
	tc.last, tc.lastCtx = key, ctx
	tc.losses++
	tc.lossAt = now
	if tc.Conn.State() == zksim.StateConnected {
		tc.connectedAt = now // still connected: the retry waits for nothing but the backoff
	}
}

// Create implements zksim.Conn.
func (tc *timedConn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	key := "create " + path
	tc.begin(ctx, key, false)
	p, err := tc.Conn.Create(ctx, path, data, mode, acl)
	tc.end(ctx, key, err)
	return p, err
}

// CreateTTL implements zksim.Conn.
func (tc *timedConn) CreateTTL(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl time.Duration) (string, error) {
	key := "create " + path
	tc.begin(ctx, key, false)
	p, err := tc.Conn.CreateTTL(ctx, path, data, mode, acl, ttl)
	tc.end(ctx, key, err)
	return p, err
}

// Delete implements zksim.Conn.
func (tc *timedConn) Delete(ctx context.Context, path string, version int32) error {
	key := "delete " + path
	tc.begin(ctx, key, false)
	err := tc.Conn.Delete(ctx, path, version)
	tc.end(ctx, key, err)
	return err
}

// Exists implements zksim.Conn.
func (tc *timedConn) Exists(ctx context.Context, path string) (bool, *zksim.Stat, error) {
	key := "exists " + path
	tc.begin(ctx, key, true)
	ok, st, err := tc.Conn.Exists(ctx, path)
	tc.end(ctx, key, err)
	return ok, st, err
}

// ExistsW implements zksim.Conn.
func (tc *timedConn) ExistsW(ctx context.Context, path string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	key := "existsW " + path
	tc.begin(ctx, key, true)
	r := tc.renewing()
	ok, st, ch, err := tc.Conn.ExistsW(ctx, path)
	tc.end(ctx, key, err)
	return ok, st, tc.lateEnd(r, ch), err
}

// renewing returns the Renewing tc wraps and the session it runs on now,
// if tc has lateWatchEnd.
func (tc *timedConn) renewing() (r lateWatch) {
	if !tc.lateWatchEnd {
		return r
	}
	if rn, ok := tc.Conn.(*sim.Renewing); ok {
		r.r, r.sess = rn, rn.Current()
	}
	return r
}

// lateWatch is a watch set through a Renewing, and the session it was set
// on.
type lateWatch struct {
	r    *sim.Renewing
	sess *sim.Conn
}

// lateEnd returns ch, or with lateWatchEnd a channel that forwards its
// event, holding an EventNotWatching with ErrSessionExpired back until the
// Renewing runs on a new session. zksim.Conn promises no order between a
// watch's channel and the session events: a client library whose watches
// learn of the expiry after it renewed the session (it renews on the
// session-event channel, read by another goroutine) is one the recipes
// must work with too: a wait must then not go on with the new session.
func (tc *timedConn) lateEnd(r lateWatch, ch <-chan zksim.Event) <-chan zksim.Event {
	if r.r == nil || ch == nil {
		return ch
	}
	out := make(chan zksim.Event, 1)
	ctx := tc.w.ctx
	tc.w.hw.Go(func() {
		var ev zksim.Event
		select {
		case ev = <-ch:
		case <-ctx.Done():
			return
		}
		if ev.Type == zksim.EventNotWatching && errors.Is(ev.Err, zksim.ErrSessionExpired) && r.r.Current() == r.sess {
			sctx, cancel := context.WithCancel(ctx)
			events := r.r.SessionEvents(sctx)
			for r.r.Current() == r.sess {
				if _, ok := <-events; !ok {
					break
				}
			}
			cancel()
		}
		out <- ev
	})
	return out
}

// Get implements zksim.Conn.
func (tc *timedConn) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	key := "get " + path
	tc.begin(ctx, key, true)
	data, st, err := tc.Conn.Get(ctx, path)
	tc.end(ctx, key, err)
	return data, st, err
}

// GetW implements zksim.Conn.
func (tc *timedConn) GetW(ctx context.Context, path string) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	key := "getW " + path
	tc.begin(ctx, key, true)
	data, st, ch, err := tc.Conn.GetW(ctx, path)
	tc.end(ctx, key, err)
	return data, st, ch, err
}

// Set implements zksim.Conn.
func (tc *timedConn) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	key := "set " + path
	tc.begin(ctx, key, false)
	st, err := tc.Conn.Set(ctx, path, data, version)
	tc.end(ctx, key, err)
	return st, err
}

// Children implements zksim.Conn.
func (tc *timedConn) Children(ctx context.Context, path string) ([]string, *zksim.Stat, error) {
	key := "children " + path
	tc.begin(ctx, key, true)
	names, st, err := tc.Conn.Children(ctx, path)
	tc.end(ctx, key, err)
	return names, st, err
}

// ChildrenW implements zksim.Conn.
func (tc *timedConn) ChildrenW(ctx context.Context, path string) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	key := "childrenW " + path
	tc.begin(ctx, key, true)
	names, st, ch, err := tc.Conn.ChildrenW(ctx, path)
	tc.end(ctx, key, err)
	return names, st, ch, err
}

// Multi implements zksim.Conn.
func (tc *timedConn) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	key := "multi"
	tc.begin(ctx, key, false)
	res, err := tc.Conn.Multi(ctx, ops...)
	tc.end(ctx, key, err)
	return res, err
}

// Sync implements zksim.Conn: timed as a read (a recipe's sync before a
// read is the first request of its retry: Barrier.Wait, the queues'
// TryTake).
func (tc *timedConn) Sync(ctx context.Context, path string) (string, error) {
	key := "sync " + path
	tc.begin(ctx, key, true)
	p, err := tc.Conn.Sync(ctx, path)
	tc.end(ctx, key, err)
	return p, err
}
