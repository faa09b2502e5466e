package property_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
)

// Under a client library that silently replaces an expired session
// (sim.Renewing, Curator's behaviour), a lock held through the old session
// must say Lost, though the client is connected again and every later
// call succeeds; and another client then gets the lock (CURATOR-696 is a
// lock that went on believing).
func TestRenewingSessionLosesLock(t *testing.T) {
	for seed := range uint64(10) {
		sim.Test(t, sim.Config{Seed: seed, Clients: 2}, func(t *testing.T, w *sim.World) {
			r := w.Renewing(0)
			m := lock.New(r, "/lock")
			var held, other atomic.Bool
			w.Go(func(ctx context.Context) {
				if m.Lock(ctx) == nil {
					held.Store(true)
				}
			})
			if err := w.Run(held.Load); err != nil {
				t.Fatal(err)
			}
			if err := w.Inject(faults.Expire(0)); err != nil {
				t.Fatal(err)
			}
			if err := w.Run(func() bool { return r.Current().Index() != 0 && r.State() == zksim.StateConnected }); err != nil {
				t.Fatal(err)
			}
			m2 := lock.New(w.Conn(1), "/lock")
			w.Go(func(ctx context.Context) {
				if m2.Lock(ctx) == nil {
					other.Store(true)
				}
			})
			if err := w.Run(other.Load); err != nil {
				t.Fatal(err)
			}
			if st := m.State(); st == recipes.Held {
				t.Errorf("seed %d: the lock of the expired session still says Held while c1 holds it", seed)
			}
		})
	}
}
