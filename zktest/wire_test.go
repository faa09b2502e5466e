package zktest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zktest"
	"github.com/zksim/zksim/zkwire"
)

// The wire backend: Disconnect cuts one session's proxy (the session and
// its ephemeral live on), Reconnect restores it, and Expire is the
// server's, which the Conn learns of.
func TestWireBackendControls(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := zkwire.NewTestServer(t, zkwire.WithZKOptions(zktest.FastOptions()))
	b := zktest.Wire(t, srv)
	require.Equal(t, zktest.WireName, b.Name)
	require.Equal(t, srv.Addr(), b.WireAddr)

	c, err := b.Connect(ctx, 4*time.Second)
	require.NoError(t, err)
	defer c.Close()
	other, err := b.Connect(ctx, 4*time.Second)
	require.NoError(t, err)
	defer other.Close()
	_, err = c.Create(ctx, "/e", nil, zksim.ModeEphemeral, zksim.OpenACL())
	require.NoError(t, err)

	require.NoError(t, b.Disconnect(ctx, c))
	require.NotEqual(t, zksim.StateConnected, c.State())
	require.Equal(t, zksim.StateConnected, other.State(), "the cut reached another session's connection")
	require.NoError(t, b.Reconnect(ctx, c))
	ok, st, err := other.Exists(ctx, "/e")
	require.NoError(t, err)
	require.True(t, ok, "the ephemeral did not outlive the cut")
	require.Equal(t, c.SessionID(), st.EphemeralOwner)

	require.NoError(t, b.Expire(ctx, c))
	_, _, err = c.Exists(ctx, "/e")
	for err == nil || !errors.Is(err, zksim.ErrSessionExpired) {
		require.NoError(t, ctx.Err(), "the Conn never learnt of its expiry (last error %v)", err)
		time.Sleep(10 * time.Millisecond)
		_, _, err = c.Exists(ctx, "/e")
	}
	ok, _, err = other.Exists(ctx, "/e")
	require.NoError(t, err)
	require.False(t, ok, "the expired session's ephemeral is still there")
}
