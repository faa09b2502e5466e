package sim_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// TestChooseLetsTimePassThenPicksAfresh: when Config.Choose lets time pass
// with a lagging member behind (the last choice it is offered), the next
// step asks it again rather than taking a stale pick: here the step after
// the wait, with a client's request and the member's apply enabled, takes
// the apply (the last event), and the run ends.
func TestChooseLetsTimePassThenPicksAfresh(t *testing.T) {
	ran := 0
	for seed := range uint64(20) {
		cfg := sim.Config{Seed: seed, Clients: 2, Members: 3, Server: zkmemOptions(),
			Choose: func(cs []sim.Choice) int { return len(cs) - 1 }}
		sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
			m0, m1 := w.Member(0), w.Member(1)
			if m0 == m1 || m0 == w.Ensemble().Leader() {
				return
			}
			ran++
			require.NoError(t, w.Inject(lagFault(m0)))
			var wrote, read atomic.Bool
			w.Go(func(ctx context.Context) {
				_, err := w.Conn(0).Create(ctx, "/x", nil, zksim.ModePersistent, zksim.OpenACL())
				wrote.Store(err == nil)
			})
			w.Go(func(ctx context.Context) {
				time.Sleep(50 * time.Millisecond)
				_, _, err := w.Conn(1).Exists(ctx, "/x")
				read.Store(err == nil)
			})
			require.NoError(t, w.Run(func() bool { return wrote.Load() && read.Load() }))
			require.Contains(t, w.TraceString(), "advance +50ms")
		})
	}
	require.NotZero(t, ran)
}
