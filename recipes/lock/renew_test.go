package lock_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
)

// TestLockAgainAcrossSessionRenewal: a process keeps one Mutex, on a
// client library that replaces an expired session with a new one
// (sim.Renewing, as Curator's). Its hold is Lost after the connection
// stayed down for the session timeout, and it locks again with the same
// Mutex, without Unlock, while still cut off: Lock first deletes what is
// left of the Lost hold, waiting for the connection. When the client is
// back, its session has expired and the library renews it. The call began
// on the old session, so it must fail with ErrSessionExpired (recipes/doc.go:
// a cleanup that meets the expiry ends its call), not go on and lock on
// the new one.
func TestLockAgainAcrossSessionRenewal(t *testing.T) {
	sim.Test(t, sim.Config{Seed: 1, Clients: 1}, func(t *testing.T, w *sim.World) {
		r := w.Renewing(0)
		m := lock.New(r, "/l")
		var (
			mu          sync.Mutex
			done        [2]bool
			first, last error
		)
		finished := func(i int) func() bool {
			return func() bool {
				mu.Lock()
				defer mu.Unlock()
				return done[i]
			}
		}
		w.Go(func(ctx context.Context) {
			err := m.Lock(ctx)
			mu.Lock()
			defer mu.Unlock()
			done[0], first = true, err
		})
		must(t, "run", w.Run(finished(0)))
		must(t, "first Lock", first)
		must(t, "disconnect", w.Inject(faults.Disconnect(0, -1)))
		must(t, "run", w.RunFor(2*r.SessionTimeout()))
		if st := m.State(); st != recipes.Lost {
			t.Fatalf("cut off for two session timeouts: %v, want Lost", st)
		}
		w.Go(func(ctx context.Context) {
			err := m.Lock(ctx)
			mu.Lock()
			defer mu.Unlock()
			done[1], last = true, err
		})
		must(t, "run", w.Run(func() bool { return finished(1)() || w.Enabled() == 0 }))
		if finished(1)() {
			t.Fatalf("Lock ended while cut off: %v", last)
		}
		must(t, "reconnect", w.Inject(faults.Reconnect(0)))
		must(t, "run", w.Run(finished(1)))
		if !errors.Is(last, zksim.ErrSessionExpired) {
			t.Fatalf("Lock begun on the expired session: %v (state %v), want ErrSessionExpired", last, m.State())
		}
		if st := m.State(); st != recipes.Lost {
			t.Fatalf("after the failed Lock: %v, want Lost (the last hold's)", st)
		}
	})
}
