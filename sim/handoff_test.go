package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
)

// With a cost model, virtual time says how long a lock handoff and a
// failover take: a release is one delete and the waiter's checks; a crashed
// holder costs the session timeout on top.
func TestVirtualTimeMeasuresHandoffAndFailover(t *testing.T) {
	measure := func(t *testing.T, crash bool) time.Duration {
		var took time.Duration
		cfg := sim.Config{Seed: 1, Clients: 2, SessionTimeout: 4 * time.Second,
			Cost: sim.CostModel{PerRequest: time.Millisecond}}
		sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
			m0, m1 := lock.New(w.Conn(0), "/lock"), lock.New(w.Conn(1), "/lock")
			var held0, held1 box[time.Duration]
			w.Go(func(ctx context.Context) {
				if m0.Lock(ctx) == nil {
					held0.put(w.Now())
				}
			})
			run(t, w, held0.ok)
			w.Go(func(ctx context.Context) {
				if m1.Lock(ctx) == nil {
					held1.put(w.Now())
				}
			})
			if err := w.RunFor(time.Second); err != nil { // the waiter parks on its watch
				t.Fatal(err)
			}
			start := w.Now()
			if crash {
				w.Inject(faults.Pause(0, -1))
			} else {
				w.Go(func(ctx context.Context) { m0.Unlock(ctx) })
			}
			run(t, w, held1.ok)
			took = held1.get() - start
		})
		return took
	}
	handoff := measure(t, false)
	failover := measure(t, true)
	t.Logf("handoff %v, failover %v", handoff, failover)
	if handoff <= 0 || handoff > 10*time.Millisecond || handoff%time.Millisecond != 0 {
		t.Errorf("handoff took %v, want a few 1ms requests", handoff)
	}
	if failover < 4*time.Second-time.Nanosecond || failover > 4*time.Second+10*time.Millisecond {
		t.Errorf("failover took %v, want the session timeout (4s) plus the waiter's few requests", failover)
	}
}
