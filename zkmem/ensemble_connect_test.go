package zkmem_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// TestEnsembleSessionOpensAfterItsMemberApplied: a member answers a new
// session only once it applied its createSession, behind every earlier
// commit (FinalRequestProcessor), so a client that connects through a
// lagging member reads every write committed before its session; the
// member lags on after it. Through Connect and through OpenSessionAt.
// (The session once opened on the member's stale state: the new client
// missed a node created before it connected.)
func TestEnsembleSessionOpensAfterItsMemberApplied(t *testing.T) {
	ctx := context.Background()
	e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
	w := connectTo(t, e, []int{0})
	old := connectTo(t, e, []int{1})
	e.Lag(1)
	_, err := w.Create(ctx, "/x", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)
	ok, _, err := old.Exists(ctx, "/x")
	require.NoError(t, err)
	require.False(t, ok, "member 1 lags: a stale read")

	r := connectTo(t, e, []int{1})
	require.Equal(t, 1, memberOf(e, r))
	ok, _, err = r.Exists(ctx, "/x")
	require.NoError(t, err)
	require.True(t, ok, "the new session reads /x, committed before it")
	require.Zero(t, e.Pending(1))

	_, err = w.Create(ctx, "/y", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)
	ok, _, err = r.Exists(ctx, "/y")
	require.NoError(t, err)
	require.False(t, ok, "member 1 still lags")
	require.Equal(t, 1, e.Pending(1))

	rec := &recorder{}
	sess, ro, err := e.OpenSessionAt(1, 10*time.Second, 0, zkmem.DefaultClientAddr, rec, false)
	require.NoError(t, err)
	require.False(t, ro)
	require.NotNil(t, sess.Do(&zkmem.Request{Op: zkmem.OpExists, Path: "/y"}).Stat, "the wire session reads /y, committed before it")
	require.Zero(t, e.Pending(1))
	_, err = w.Create(ctx, "/z", nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)
	require.Nil(t, sess.Do(&zkmem.Request{Op: zkmem.OpExists, Path: "/z"}).Stat, "member 1 still lags")
}
