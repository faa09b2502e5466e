package queue_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/queue"
	"github.com/zksim/zksim/sim"
)

// simCall runs f as a client goroutine of w and steps w until it returns.
func simCall[T any](t *testing.T, w *sim.World, f func(ctx context.Context) (T, error)) (T, error) {
	t.Helper()
	var (
		mu   sync.Mutex
		done bool
		v    T
		err  error
	)
	w.Go(func(ctx context.Context) {
		r, e := f(ctx)
		mu.Lock()
		defer mu.Unlock()
		done, v, err = true, r, e
	})
	if err := w.Run(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done
	}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return v, err
}

// TestAckAcrossSessionRenewal: a locking-queue consumer runs on a client
// library that replaces an expired session with a new one (sim.Renewing,
// as Curator's). It takes an item, its session expires (its claim with
// it), and another consumer takes the item. Its Ack, on the new session,
// must fail with ErrClaimLost (and ErrSessionExpired), as the package
// promises when "our claim is gone (session expired ...)": not delete the
// other consumer's claim with the item and succeed, which would leave the
// other consumer's Ack failing on an item nobody else was given, or,
// after a lost reply, deliver it twice.
func TestAckAcrossSessionRenewal(t *testing.T) {
	cfg := sim.Config{Seed: 1, Clients: 3, ReconnectDelay: time.Second}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		const dir = "/q"
		r := w.Renewing(0)
		a := queue.NewLocking(r, dir)
		b := queue.NewLocking(w.Conn(1), dir)
		p := queue.NewLocking(w.Conn(2), dir)
		if _, err := simCall(t, w, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, p.Offer(ctx, []byte("x"))
		}); err != nil {
			t.Fatalf("Offer: %v", err)
		}
		itA, err := simCall(t, w, a.TryTake)
		if err != nil {
			t.Fatalf("a's TryTake: %v", err)
		}
		old := r.Current()
		if err := w.Inject(faults.Expire(0)); err != nil {
			t.Fatal(err)
		}
		if err := w.Run(func() bool { return r.Current() != old }); err != nil {
			t.Fatal(err)
		}
		itB, err := simCall(t, w, b.TryTake)
		if err != nil {
			t.Fatalf("b's TryTake once a's session expired: %v", err)
		}
		if _, err := simCall(t, w, func(ctx context.Context) (struct{}, error) { return struct{}{}, itA.Ack(ctx) }); !errors.Is(err, queue.ErrClaimLost) || !errors.Is(err, zksim.ErrSessionExpired) {
			t.Fatalf("a's Ack on its renewed session: %v, want ErrClaimLost and ErrSessionExpired", err)
		}
		if _, err := simCall(t, w, func(ctx context.Context) (struct{}, error) { return struct{}{}, itB.Ack(ctx) }); err != nil {
			t.Fatalf("b's Ack: %v", err)
		}
	})
}
