package retry_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/sim"
)

// result holds what a client goroutine of a sim.World returned.
type result struct {
	mu   sync.Mutex
	done bool
	err  error
}

func (r *result) put(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done, r.err = true, err
}

func (r *result) ok() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

func (r *result) get() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// inject injects f into w.
func inject(t *testing.T, w *sim.World, f sim.StepFault) {
	t.Helper()
	if err := w.Inject(f); err != nil {
		t.Fatalf("inject %v: %v", f, err)
	}
}

// run runs w until done reports true.
func run(t *testing.T, w *sim.World, done func() bool) {
	t.Helper()
	if err := w.Run(done); err != nil {
		t.Fatalf("run: %v", err)
	}
}

// renewedWhileWaiting starts wait on a Renewing client whose connection is
// down, runs the World until waiting reports true, then expires the
// session and lets the client reconnect: it renews the session
// (StateExpired, then StateConnected of a new session). It returns wait's
// error.
func renewedWhileWaiting(t *testing.T, w *sim.World, r *sim.Renewing, wait func(ctx context.Context) error, waiting func() bool) error {
	t.Helper()
	first := r.SessionID()
	inject(t, w, faults.Disconnect(0, -1))
	run(t, w, func() bool { return r.State() == zksim.StateDisconnected })
	var res result
	w.Go(func(ctx context.Context) { res.put(wait(ctx)) })
	run(t, w, func() bool { return res.ok() || waiting() })
	if res.ok() {
		t.Fatalf("the wait ended before the session expired: %v", res.get())
	}
	inject(t, w, faults.Expire(0))
	inject(t, w, faults.Reconnect(0))
	run(t, w, res.ok)
	if r.SessionID() == first || r.State() != zksim.StateConnected {
		t.Fatalf("the client did not renew its session: session %#x (was %#x), state %v", r.SessionID(), first, r.State())
	}
	return res.get()
}

// TestWaitConnectedEndsOnSessionRenewal: a client library that replaces an
// expired session with a new one (sim.Renewing, as Curator's) is connected
// again after the expiry, but not to the session the wait began on:
// WaitConnected returns ErrSessionExpired.
func TestWaitConnectedEndsOnSessionRenewal(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		r := w.Renewing(0)
		err := renewedWhileWaiting(t, w, r, func(ctx context.Context) error { return retry.WaitConnected(ctx, r) },
			func() bool { return true })
		if !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("WaitConnected across a session renewal: %v, want ErrSessionExpired", err)
		}
	})
}

// TestDoEndsOnSessionRenewal: Do does not retry on the new session a
// renewing client goes on with; it returns ErrSessionExpired after the one
// attempt on the old session.
func TestDoEndsOnSessionRenewal(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		r := w.Renewing(0)
		var calls, losses atomic.Int32
		err := renewedWhileWaiting(t, w, r, func(ctx context.Context) error {
			return retry.Do(ctx, r, func() error {
				calls.Add(1)
				_, _, err := r.Exists(ctx, "/")
				if errors.Is(err, zksim.ErrConnectionLoss) {
					losses.Add(1)
				}
				return err
			})
		}, func() bool { return losses.Load() > 0 })
		if !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("Do across a session renewal: %v, want ErrSessionExpired", err)
		}
		if n := calls.Load(); n != 1 {
			t.Fatalf("Do made %d attempts, want 1 (on the first session only)", n)
		}
	})
}

// swappingConn is connected throughout; its session id changes when bump
// is called, as a renewing client's does when it has replaced its expired
// session before the caller looks.
type swappingConn struct {
	zksim.Conn // nil: only State and SessionID are called
	id         atomic.Int64
}

func (c *swappingConn) State() zksim.State { return zksim.StateConnected }
func (c *swappingConn) SessionID() int64   { return c.id.Load() }

// TestDoEndsWhenRenewedBeforeThePause: the session was replaced between
// the attempt that lost the connection and the pause (the pause finds the
// client connected at once): Do still sees that a retry would run on
// another session.
func TestDoEndsWhenRenewedBeforeThePause(t *testing.T) {
	c := &swappingConn{}
	c.id.Store(1)
	calls := 0
	err := retry.Do(t.Context(), c, func() error {
		calls++
		if calls > 1 {
			return nil // on the new session
		}
		c.id.Add(1)
		return zksim.ErrConnectionLoss
	})
	if !errors.Is(err, zksim.ErrSessionExpired) || calls != 1 {
		t.Fatalf("Do: %v after %d attempts, want ErrSessionExpired after 1", err, calls)
	}
	// The same session throughout: Do retries.
	calls = 0
	err = retry.Do(t.Context(), c, func() error {
		calls++
		if calls < 3 {
			return zksim.ErrConnectionLoss
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Do: %v after %d attempts, want nil after 3", err, calls)
	}
}
