package sim_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// Reseed restarts the scheduler's choices and the fault draws as New
// does from Config.Seed: after Reseed(s), a World made from seed 1 draws
// what a World made from seed s draws, and orders the same run the same
// way.
func TestReseedRestartsTheSeedsStreams(t *testing.T) {
	draws := func(seed uint64, reseed bool) (first uint64, order string) {
		sim.Test(t, sim.Config{Seed: seed, Clients: 4}, func(t *testing.T, w *sim.World) {
			if reseed {
				w.Reseed(7)
			}
			first = w.Rand().Uint64()
			var done box[int]
			for i := range w.NumClients() {
				c := w.Conn(i)
				w.Go(func(ctx context.Context) {
					if _, err := c.Create(ctx, fmt.Sprintf("/n%d", i), nil, zksim.ModePersistent, open); err == nil {
						done.put(done.get() + 1)
					}
				})
			}
			run(t, w, func() bool { return done.get() == w.NumClients() })
			order = fmt.Sprint(applied(w.TraceString()))
		})
		return first, order
	}
	want, wantOrder := draws(7, false)
	got, gotOrder := draws(1, true)
	if got != want || gotOrder != wantOrder {
		t.Errorf("seed 1 reseeded to 7: first draw %#x, creates applied %s; seed 7: %#x, %s", got, gotOrder, want, wantOrder)
	}
	other, otherOrder := draws(1, false)
	if other == want && otherOrder == wantOrder {
		t.Errorf("seed 1 without Reseed drew as seed 7 (%#x, %s): the check cannot tell Reseed did anything", other, otherOrder)
	}
}
