package sim_test

import (
	"fmt"
	"testing"

	"github.com/zksim/zksim/sim"
)

// BenchmarkScheduleEnsemble is BenchmarkSchedule on a standalone server and
// on a 3-member ensemble (the clients spread over the members), and on one
// whose first follower lags: its commits are applied by scheduler events,
// and every call runs where it may wait for its member.
//
//	go test -run '^$' -bench 'ScheduleEnsemble' -benchtime 100000x ./sim/
func BenchmarkScheduleEnsemble(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("standalone/clients=%d", n), func(b *testing.B) {
			benchSchedule(b, sim.Config{}, readWriters(n))
		})
		b.Run(fmt.Sprintf("members=3/clients=%d", n), func(b *testing.B) {
			benchSchedule(b, sim.Config{Members: 3}, readWriters(n))
		})
		b.Run(fmt.Sprintf("members=3,lag/clients=%d", n), func(b *testing.B) {
			benchSchedule(b, sim.Config{Members: 3}, func(w *sim.World) error {
				if err := w.Faults().Lag((w.Ensemble().Leader() + 1) % 3); err != nil {
					return err
				}
				return readWriters(n)(w)
			})
		})
	}
}
