package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
)

// The simulator test the README shows; kept here so it stays true.
func TestLockUnderFaults(t *testing.T) {
	cfg := sim.Config{Seed: 42, Clients: 3, Policy: faults.Mix(0.02)}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		for i := range 3 {
			m := lock.New(w.Conn(i), "/lock")
			w.Go(func(ctx context.Context) {
				if m.Lock(ctx) == nil {
					m.Unlock(ctx)
				}
			})
		}
		if err := w.RunFor(time.Minute); err != nil {
			t.Fatal(err)
		}
	})
}
