package zktest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zktest"
)

// The zkmem ensemble adapter elects by itself, waits in Connect for a
// member that grants the session, and reports bad member indexes.
func TestMemEnsembleAdapter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ens := zktest.OpenMemEnsemble(t, 3, zktest.FastOptions())
	require.Equal(t, zktest.EnsembleMemName, ens.Name())
	leader, err := ens.Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, leader, "the highest index leads first")

	c, err := ens.Connect(ctx, 4*time.Second, 2, 1)
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, 2, ens.MemberOf(c))
	_, err = c.Create(ctx, "/a", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)

	require.NoError(t, ens.Crash(ctx, 2))
	next, err := ens.Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, next, "no new leader was elected after the leader crashed")
	require.Equal(t, 1, ens.MemberOf(c), "the session did not move to the next member of its list")
	ok, _, err := c.Exists(ctx, "/a")
	require.NoError(t, err)
	require.True(t, ok)

	// A crashed member grants nothing: Connect waits until ctx ends.
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	_, err = ens.Connect(short, 4*time.Second, 2)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, ens.Restart(ctx, 2))
	o, err := ens.Connect(ctx, 4*time.Second, 2)
	require.NoError(t, err)
	defer o.Close()
	z, err := ens.AppliedZxid(ctx, 2)
	require.NoError(t, err)
	lz, err := ens.AppliedZxid(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, lz, z, "the restarted member did not catch up")

	_, err = ens.AppliedZxid(ctx, 3)
	require.Error(t, err)
	require.Error(t, ens.Lag(ctx, -1))
	_, err = ens.Connect(ctx, 4*time.Second, 3)
	require.Error(t, err)
	require.False(t, errors.Is(err, context.DeadlineExceeded), "a bad member index is reported at once: %v", err)
}
