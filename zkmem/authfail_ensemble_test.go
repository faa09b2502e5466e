package zkmem_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// An ensemble Conn whose member crashes moves to another member by
// itself; with a failed authentication armed, that member refuses it: the
// Conn ends in StateAuthFailed (after StateDisconnected), attached to no
// member, its calls fail with ErrAuthFailed and its watches end, and the
// leader expires its session one session timeout after the failed
// reconnection (the member heard the client then), deleting its
// ephemeral node.
func TestEnsembleMoveFailsAuth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		require.Equal(t, 2, e.Leader())
		c := connectTo(t, e, []int{0, 1}, zkmem.WithSessionTimeout(4*time.Second))
		other := connectTo(t, e, []int{2})
		events := c.SessionEvents(ctx)
		_, err := c.Create(ctx, "/e", nil, zksim.ModeEphemeral, zksim.OpenACL())
		require.NoError(t, err)
		_, _, watch, err := c.ExistsW(ctx, "/w")
		require.NoError(t, err)
		require.NoError(t, e.Server().Control(c.SessionID()).FailNextAuth())
		timeout := c.SessionTimeout()

		// Connected, the Conn goes on as before.
		time.Sleep(timeout / 2)
		_, _, err = c.Exists(ctx, "/e")
		require.NoError(t, err)

		e.Crash(0)
		failedAt := time.Now()
		require.Equal(t, zksim.StateAuthFailed, c.State())
		require.Equal(t, zksim.StateDisconnected, (<-events).State)
		require.Equal(t, zksim.StateAuthFailed, (<-events).State)
		require.Equal(t, -1, memberOf(e, c))
		ev := <-watch
		require.Equal(t, zksim.EventNotWatching, ev.Type)
		require.ErrorIs(t, ev.Err, zksim.ErrAuthFailed)
		_, _, err = c.Exists(ctx, "/e")
		require.ErrorIs(t, err, zksim.ErrAuthFailed)
		require.ErrorIs(t, e.Server().Control(c.SessionID()).Reconnect(), zksim.ErrAuthFailed)

		// The session lives, unheard, a session timeout from the failed
		// reconnection (not from the crash's disconnection: the same
		// instant here, but not from the last request either).
		time.Sleep(timeout - time.Millisecond - time.Since(failedAt))
		ok, _, err := other.Exists(ctx, "/e")
		require.NoError(t, err)
		require.True(t, ok, "the ephemeral node went before the session timeout")
		time.Sleep(2 * time.Millisecond)
		ok, _, err = other.Exists(ctx, "/e")
		require.NoError(t, err)
		require.False(t, ok, "the ephemeral node outlived the session timeout")
		require.Equal(t, []int64{other.SessionID()}, e.Server().SessionIDs())
		require.NoError(t, c.Close())
	})
}

// A Conn that waits for a member (the one left lags behind what the
// client saw) fails authentication when that member catches up and takes
// it: the session's clock starts again then, so it expires a session
// timeout after the failed reconnection, not after the disconnection.
func TestEnsembleLateReconnectFailsAuth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		c := connectTo(t, e, []int{0, 1}, zkmem.WithSessionTimeout(4*time.Second))
		timeout := c.SessionTimeout()
		e.Lag(1)
		_, err := c.Create(ctx, "/e", nil, zksim.ModeEphemeral, zksim.OpenACL())
		require.NoError(t, err)
		require.NoError(t, e.Server().Control(c.SessionID()).FailNextAuth())
		e.Crash(0)
		require.Equal(t, zksim.StateDisconnected, c.State())
		time.Sleep(timeout / 2)
		e.CatchUp(1)
		require.Equal(t, zksim.StateAuthFailed, c.State())
		time.Sleep(timeout - time.Millisecond)
		require.Contains(t, e.Server().SessionIDs(), c.SessionID())
		time.Sleep(2 * time.Millisecond)
		require.NotContains(t, e.Server().SessionIDs(), c.SessionID())
	})
}

// On a standalone server Control.Reconnect meets the armed failure:
// it returns ErrAuthFailed and the Conn is done; an expired session's
// reconnection learns of the expiry instead.
func TestReconnectFailsAuth(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	c, err := srv.Connect()
	require.NoError(t, err)
	ctl := srv.Control(c.SessionID())
	require.NoError(t, ctl.FailNextAuth())
	ctl.Disconnect()
	require.ErrorIs(t, ctl.Reconnect(), zksim.ErrAuthFailed)
	require.Equal(t, zksim.StateAuthFailed, c.State())
	require.Contains(t, srv.SessionIDs(), c.SessionID())

	expired, err := srv.Connect()
	require.NoError(t, err)
	ctl = srv.Control(expired.SessionID())
	require.NoError(t, ctl.FailNextAuth())
	ctl.Disconnect()
	ctl.Expire()
	require.ErrorIs(t, ctl.Reconnect(), zksim.ErrSessionExpired)
	require.Equal(t, zksim.StateExpired, expired.State())

	// A remote client's session: not the in-process Conn's to fail.
	sess, err := srv.OpenSession(time.Second, netip.MustParseAddr("127.0.0.1"), nopSink{})
	require.NoError(t, err)
	if err := srv.Control(sess.ID()).FailNextAuth(); !errors.Is(err, zkmem.ErrNotInProcess) {
		t.Errorf("FailNextAuth of a remote session: %v, want ErrNotInProcess", err)
	}
}

// nopSink is a transport that drops everything.
type nopSink struct{}

func (nopSink) Reply(*zkmem.Request, *zkmem.Response) {}
func (nopSink) Event(zksim.Event, int64)              {}
func (nopSink) Closed(error)                          {}
