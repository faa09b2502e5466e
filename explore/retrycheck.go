package explore

import (
	"context"
	"errors"
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
// (operation and path) is repeated after k ≥ 2 losses in a row
//
//   - sooner than backoff(k) after the last loss (any request: a recipe
//     may count more losses than the ones in a row, never fewer), or
//   - later than backoff(k) after the connection was back (only reads,
//     which every recipe repeats through retry.Do alone, so that the
//     pause is exactly the backoff).
//
// After a first loss (k = 1) the next request, whatever it is, is checked
// too when it is a read: it must go out as the connection is back, since
// retry.Pause waits for nothing else then (a multi whose reply was lost
// is followed by a read that looks whether it took effect).
//
// It needs the calls of one Conn to come from one goroutine at a time, as
// in the barrier machines (one operation per client at a time).

// backoff is the pause before the repeat of a request after k losses in a
// row: none after the first, then 5 ms, 10 ms, ... up to 500 ms.
func backoff(k int) time.Duration {
	if k < 2 {
		return 0
	}
	return min(5*time.Millisecond<<min(k-2, 10), 500*time.Millisecond)
}

// timedConn wraps a client's sim.Conn to check the retry timing.
type timedConn struct {
	*sim.Conn
	w   *world
	idx int // the client's index
	// noTimeout makes SessionTimeout report 0, as a client library does
	// before its first session: the recipes then presume expiry after
	// 1.5 × 10 s of downtime.
	noTimeout bool

	mu          sync.Mutex
	last        string        // the last request: op and path
	losses      int           // connection losses in a row of last
	lossAt      time.Duration // when the last loss was returned
	connectedAt time.Duration // when the Conn last became connected
	// up tells whether the last session event the event goroutine heard
	// said connected, and upAt when (-1: never): the first-loss check
	// trusts nothing else. lostOnce tells whether the last request lost
	// is the first of its kind (op and path) lost since reset: the recipe
	// then counts no earlier loss either.
	up       bool
	upAt     time.Duration
	lostOnce bool
	lostKey  map[string]int // losses by request since reset
}

var _ zksim.Conn = (*timedConn)(nil)

// newTimedConn wraps c's Conn; it follows the Conn's state until the run
// ends.
func newTimedConn(w *world, c *client) *timedConn {
	tc := &timedConn{Conn: c.conn, w: w, idx: c.idx, connectedAt: -1, upAt: -1}
	events := c.conn.SessionEvents(w.ctx)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for ev := range events {
			tc.mu.Lock()
			tc.up = ev.State == zksim.StateConnected
			if tc.up {
				tc.connectedAt, tc.upAt = w.sw.Now(), w.sw.Now()
			}
			tc.mu.Unlock()
		}
	}()
	return tc
}

// reset forgets the losses so far: an operation begins (the losses of a
// cancelled one are not the next one's).
func (tc *timedConn) reset() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.last, tc.losses = "", 0
	tc.lostOnce, tc.lostKey = false, nil
}

// SessionTimeout implements zksim.Conn: 0 with noTimeout.
func (tc *timedConn) SessionTimeout() time.Duration {
	if tc.noTimeout {
		return 0
	}
	return tc.Conn.SessionTimeout()
}

// heardUp is when the client last heard that its Conn was connected (-1:
// never).
func (tc *timedConn) heardUp() time.Duration {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.upAt
}

// presumedExpiry is how long a cleanup on tc waits out continuous
// downtime before it presumes the session expired: 1.5 session timeouts,
// of 10 s when the Conn reports none.
func (tc *timedConn) presumedExpiry() time.Duration {
	d := tc.SessionTimeout()
	if d <= 0 {
		d = 10 * time.Second
	}
	return d * 3 / 2
}

// begin checks the timing of a request about to be sent; read tells a
// request that the recipes repeat through retry.Do alone.
func (tc *timedConn) begin(key string, read bool) {
	now := tc.w.sw.Now()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.lostOnce && read && tc.up && tc.upAt >= tc.lossAt && now > tc.upAt {
		// After a first loss a recipe waits for the connection only
		// (retry.Pause with 0 losses): its next request, whatever it is,
		// goes out as the connection is back. The event goroutine may not
		// have heard of the return yet (its last event is not connected,
		// or older than the loss): unchecked then.
		tc.w.violate("retried too late", "p%d sent %s %v after its first connection loss in a row (of %s) and the connection's return; the backoff is 0", tc.idx, key, now-tc.upAt, tc.last)
	}
	if key != tc.last || tc.losses < 2 {
		return
	}
	want := backoff(tc.losses)
	if now < tc.lossAt+want {
		tc.w.violate("retried too soon", "p%d repeated %s %v after its %d-th connection loss in a row; the backoff is %v", tc.idx, key, now-tc.lossAt, tc.losses, want)
	}
	if base := max(tc.lossAt, tc.connectedAt); read && tc.connectedAt >= 0 && now > base+want {
		tc.w.violate("retried too late", "p%d repeated %s %v after its %d-th connection loss in a row and the connection's return; the backoff is %v", tc.idx, key, now-base, tc.losses, want)
	}
}

// end records the result of the request key.
func (tc *timedConn) end(key string, err error) {
	now := tc.w.sw.Now()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.lostOnce = false
	if !errors.Is(err, zksim.ErrConnectionLoss) {
		tc.last, tc.losses = key, 0
		return
	}
	if tc.lostKey == nil {
		tc.lostKey = map[string]int{}
	}
	tc.lostKey[key]++
	tc.lostOnce = tc.lostKey[key] == 1
	if key != tc.last {
		tc.losses = 0
	}
	tc.last = key
	tc.losses++
	tc.lossAt = now
	if tc.Conn.State() == zksim.StateConnected {
		tc.connectedAt = now // still connected: the retry waits for nothing but the backoff
	}
}

// Create implements zksim.Conn.
func (tc *timedConn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	key := "create " + path
	tc.begin(key, false)
	p, err := tc.Conn.Create(ctx, path, data, mode, acl)
	tc.end(key, err)
	return p, err
}

// CreateTTL implements zksim.Conn.
func (tc *timedConn) CreateTTL(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL, ttl time.Duration) (string, error) {
	key := "create " + path
	tc.begin(key, false)
	p, err := tc.Conn.CreateTTL(ctx, path, data, mode, acl, ttl)
	tc.end(key, err)
	return p, err
}

// Delete implements zksim.Conn.
func (tc *timedConn) Delete(ctx context.Context, path string, version int32) error {
	key := "delete " + path
	tc.begin(key, false)
	err := tc.Conn.Delete(ctx, path, version)
	tc.end(key, err)
	return err
}

// Exists implements zksim.Conn.
func (tc *timedConn) Exists(ctx context.Context, path string) (bool, *zksim.Stat, error) {
	key := "exists " + path
	tc.begin(key, true)
	ok, st, err := tc.Conn.Exists(ctx, path)
	tc.end(key, err)
	return ok, st, err
}

// ExistsW implements zksim.Conn.
func (tc *timedConn) ExistsW(ctx context.Context, path string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	key := "existsW " + path
	tc.begin(key, true)
	ok, st, ch, err := tc.Conn.ExistsW(ctx, path)
	tc.end(key, err)
	return ok, st, ch, err
}

// Get implements zksim.Conn.
func (tc *timedConn) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	key := "get " + path
	tc.begin(key, true)
	data, st, err := tc.Conn.Get(ctx, path)
	tc.end(key, err)
	return data, st, err
}

// GetW implements zksim.Conn.
func (tc *timedConn) GetW(ctx context.Context, path string) ([]byte, *zksim.Stat, <-chan zksim.Event, error) {
	key := "getW " + path
	tc.begin(key, true)
	data, st, ch, err := tc.Conn.GetW(ctx, path)
	tc.end(key, err)
	return data, st, ch, err
}

// Set implements zksim.Conn.
func (tc *timedConn) Set(ctx context.Context, path string, data []byte, version int32) (*zksim.Stat, error) {
	key := "set " + path
	tc.begin(key, false)
	st, err := tc.Conn.Set(ctx, path, data, version)
	tc.end(key, err)
	return st, err
}

// Children implements zksim.Conn.
func (tc *timedConn) Children(ctx context.Context, path string) ([]string, *zksim.Stat, error) {
	key := "children " + path
	tc.begin(key, true)
	names, st, err := tc.Conn.Children(ctx, path)
	tc.end(key, err)
	return names, st, err
}

// ChildrenW implements zksim.Conn.
func (tc *timedConn) ChildrenW(ctx context.Context, path string) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	key := "childrenW " + path
	tc.begin(key, true)
	names, st, ch, err := tc.Conn.ChildrenW(ctx, path)
	tc.end(key, err)
	return names, st, ch, err
}

// Multi implements zksim.Conn.
func (tc *timedConn) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	key := "multi"
	tc.begin(key, false)
	res, err := tc.Conn.Multi(ctx, ops...)
	tc.end(key, err)
	return res, err
}
