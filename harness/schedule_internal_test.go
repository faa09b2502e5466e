package harness

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/zkmem"
)

// A draw inside a step of the simulator that panics (rapid out of data as
// it shrinks; here, no rapid.T at all) does not unwind the step: the
// scheduler leaves the choice to the seed, draws nothing more in the
// step, and keeps the panic for step to raise once the step is over.
func TestDrawPanicWaitsForTheEndOfTheStep(t *testing.T) {
	s := &scheduler{drawing: true, w: &runWorld{mix: AllFaults}}
	require.Equal(t, -1, s.choose(3))
	require.NotNil(t, s.panicked)
	first := s.panicked
	require.Equal(t, -1, s.choose(2))
	require.Zero(t, s.Request(nil, 0, &zkmem.Request{Op: zkmem.OpCreate}, nil))
	require.Equal(t, first, s.panicked, "a second draw in the step")
}
