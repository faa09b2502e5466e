package sim_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
)

// contenders is a workload: n clients take the lock /lock rounds times
// each, hold it for a while, and write the fencing token to a resource.
type contenders struct {
	mu       sync.Mutex
	finished int
	acquired []int   // locks taken, by client
	errs     []error // last error, by client
	resource fencedResource
}

// fencedResource refuses writes with a token older than one it has seen.
type fencedResource struct {
	highest  int64
	writes   int
	refusals int
}

func (r *fencedResource) write(token int64) bool {
	if token < r.highest {
		r.refusals++
		return false
	}
	r.highest = token
	r.writes++
	return true
}

func (c *contenders) done(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.finished == n
}

// start starts n contender goroutines on w's first n clients.
func (c *contenders) start(w *sim.World, n, rounds int, hold time.Duration) {
	c.acquired = make([]int, n)
	c.errs = make([]error, n)
	for i := range n {
		conn := w.Conn(i)
		w.Go(func(ctx context.Context) {
			defer func() {
				c.mu.Lock()
				c.finished++
				c.mu.Unlock()
			}()
			for range rounds {
				m := lock.New(conn, "/lock")
				lctx, cancel := context.WithTimeout(ctx, time.Minute)
				err := m.Lock(lctx)
				cancel()
				if err != nil {
					c.mu.Lock()
					c.errs[i] = err
					c.mu.Unlock()
					if errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing) || ctx.Err() != nil {
						return
					}
					continue
				}
				c.mu.Lock()
				c.acquired[i]++
				c.resource.write(m.Token())
				c.mu.Unlock()
				select {
				case <-time.After(hold):
				case <-ctx.Done():
					return
				}
				uctx, cancel := context.WithTimeout(ctx, time.Minute)
				err = m.Unlock(uctx)
				cancel()
				if err != nil {
					c.mu.Lock()
					c.errs[i] = err
					c.mu.Unlock()
				}
			}
		})
	}
}

// runLockWorld runs 5 contenders under the fault mix for seed and returns
// the trace and the workload.
func runLockWorld(t *testing.T, seed uint64, clients int) (string, *contenders) {
	t.Helper()
	var trace string
	var work contenders
	cfg := sim.Config{
		Seed:           seed,
		Clients:        clients,
		SessionTimeout: 4 * time.Second,
		ReconnectDelay: 50 * time.Millisecond,
		Server:         zkmemOptions(),
		Cost:           sim.CostModel{PerRequest: time.Millisecond},
		Policy:         faults.Mix(0.02),
		MaxSteps:       20000,
	}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		work.start(w, clients, 3, 100*time.Millisecond)
		err := w.Run(func() bool { return work.done(clients) })
		if err != nil && !errors.Is(err, sim.ErrIdle) && !errors.Is(err, sim.ErrMaxSteps) {
			t.Errorf("run: %v", err)
		}
		trace = w.TraceString()
	})
	return trace, &work
}
