package zktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zktest"
)

// The wire ensemble adapter: go-zookeeper sessions through a router per
// Conn, each attached to the member its connection reached; a crashed
// leader is replaced at once and the session moves on; bad member indexes
// are errors.
func TestWireEnsembleAdapter(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ens := zktest.OpenWireEnsemble(t, 3, zktest.FastOptions())
	require.Equal(t, zktest.EnsembleWireName, ens.Name())
	leader, err := ens.Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, leader, "the highest index leads first")

	c, err := ens.Connect(ctx, 4*time.Second, 2, 1)
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, 2, ens.MemberOf(c))
	_, err = c.Create(ctx, "/a", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)

	events := c.SessionEvents(ctx)
	require.NoError(t, ens.Crash(ctx, 2))
	for _, want := range []zksim.State{zksim.StateDisconnected, zksim.StateConnected} {
		for ev := range events {
			if ev.State == want {
				break
			}
		}
	}
	next, err := ens.Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, next, "no new leader was elected after the leader crashed")
	ok, _, err := c.Exists(ctx, "/a")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1, ens.MemberOf(c), "the session did not move to the next member of its list")
	require.NoError(t, ens.Restart(ctx, 2))

	_, err = ens.AppliedZxid(ctx, 3)
	require.Error(t, err)
	require.Error(t, ens.Lag(ctx, -1))
	_, err = ens.Connect(ctx, 4*time.Second, 3)
	require.Error(t, err)
	_, err = ens.ConnectReadOnly(ctx, 4*time.Second, 3)
	require.Error(t, err)
}
