package harness

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// A draw inside a step of the simulator that panics (rapid out of data as
// it shrinks; here, no rapid.T at all) does not unwind the step: the
// scheduler leaves the choice to the seed, draws nothing more in the
// step, and keeps the panic for step to raise once the step is over.
func TestDrawPanicWaitsForTheEndOfTheStep(t *testing.T) {
	s := &scheduler{drawing: true, w: &runWorld{mix: AllFaults}}
	three := []sim.Choice{{Kind: sim.ChoiceAdmit, Index: 0}, {Kind: sim.ChoiceAdmit, Index: 1}, {Kind: sim.ChoiceDeliver, Index: 0}}
	require.Equal(t, -1, s.choose(three))
	require.NotNil(t, s.panicked)
	first := s.panicked
	require.Equal(t, -1, s.choose(three[:2]))
	require.Zero(t, s.Request(nil, 0, &zkmem.Request{Op: zkmem.OpCreate}, nil))
	require.Equal(t, first, s.panicked, "a second draw in the step")
}

// A Step's draw picks an event by what it is: the same draw picks the same
// event whichever other events are enabled beside it (so a shrink that
// drops an unrelated event keeps the later picks), and over the draws
// each event is picked about as often as any other.
func TestRendezvousPicksByIdentity(t *testing.T) {
	all := []sim.Choice{
		{Kind: sim.ChoiceAdmit, Index: 0}, {Kind: sim.ChoiceAdmit, Index: 2},
		{Kind: sim.ChoiceDeliver, Index: 1}, {Kind: sim.ChoiceDeliver, Index: 2},
		{Kind: sim.ChoiceMemberApply, Index: 1},
	}
	counts := make([]int, len(all))
	const draws = 1 << 14
	for v := range uint64(draws) {
		k := rendezvous(v, all)
		counts[k]++
		// Without another event, the same draw picks the same one.
		for drop := range all {
			if drop == k {
				continue
			}
			rest := append(append([]sim.Choice(nil), all[:drop]...), all[drop+1:]...)
			got := rest[rendezvous(v, rest)]
			require.Equal(t, all[k], got, "draw %d without %v", v, all[drop])
		}
	}
	for k, n := range counts {
		require.InDelta(t, draws/len(all), n, float64(draws/len(all)/5), "%v picked %d times of %d", all[k], n, draws)
	}
}
