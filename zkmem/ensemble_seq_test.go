package zkmem_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// TestEnsembleSetNextSequenceReachesALaggingMember: SetNextSequence on an
// ensemble's server sets the committed counter; a member that fell behind
// sets its own once it has applied the state the call was made on, and
// keeps it through the later commits it replays. (It once kept the old
// counter until the node's next change.)
func TestEnsembleSetNextSequenceReachesALaggingMember(t *testing.T) {
	ctx := context.Background()
	e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
	w := connectTo(t, e, []int{0})
	r := connectTo(t, e, []int{1})
	_, err := w.Create(ctx, "/p", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)
	_, err = w.Create(ctx, "/q", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)
	// The counter member 1 serves: Stat.Cversion is twice the child
	// creates less the children.
	counter := func() int32 {
		t.Helper()
		_, st, err := r.Exists(ctx, "/p")
		require.NoError(t, err)
		require.NotNil(t, st)
		return (st.Cversion + st.NumChildren) / 2
	}
	e.Lag(1)
	require.NoError(t, e.Server().SetNextSequence("/p", 100)) // member 1 has applied that state
	_, err = w.Create(ctx, "/q/a", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)
	require.NoError(t, e.Server().SetNextSequence("/p", 200)) // member 1 has not
	_, err = w.Create(ctx, "/q/b", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)
	require.Equal(t, int32(100), counter())
	require.True(t, e.ApplyNext(1))
	require.Equal(t, int32(200), counter())
	e.CatchUp(1)
	require.Equal(t, int32(200), counter())
	name, err := r.Create(ctx, "/p/s-", nil, zksim.ModePersistentSequential, zksim.OpenACL())
	require.NoError(t, err)
	require.Equal(t, "/p/s-0000000200", name)
	require.Equal(t, int32(201), counter())
}
