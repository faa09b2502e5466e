package zkmem_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// TestEnsembleGetEphemeralsFromTheMembersState: getEphemerals is a read,
// served from the session's member as it applied the history: on a
// lagging member it still lists the ephemerals another session deleted,
// until the member applies each delete, in the order of the member's own
// set, which goes through the same adds and removals as the leader's (a
// standalone server's session, given the same history, lists the same).
// (It once answered from the committed state.)
func TestEnsembleGetEphemeralsFromTheMembersState(t *testing.T) {
	ctx := context.Background()
	e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
	a, _, err := e.OpenSessionAt(1, 10*time.Second, 0, zkmem.DefaultClientAddr, &recorder{}, false)
	require.NoError(t, err)
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	b, _ := open(t, srv, 10*time.Second) // the same history, standalone
	list := func(sess *zkmem.Session) []string {
		t.Helper()
		resp := sess.Do(&zkmem.Request{Op: zkmem.OpGetEphemerals, Path: "/"})
		require.NoError(t, resp.Err)
		return resp.Children
	}
	for i := range 20 {
		for _, sess := range []*zkmem.Session{a, b} {
			req := &zkmem.Request{Op: zkmem.OpCreate, Path: fmt.Sprintf("/e%d", i), Mode: zksim.ModeEphemeral, ACL: zksim.OpenACL(), TTL: -1}
			require.NoError(t, sess.Do(req).Err)
		}
	}
	all := list(a)
	require.Len(t, all, 20)
	require.Equal(t, list(b), all)

	admin := connectTo(t, e, []int{0})
	e.Lag(1)
	for i := range 15 {
		require.NoError(t, admin.Delete(ctx, fmt.Sprintf("/e%d", i), -1))
	}
	require.Equal(t, all, list(a), "member 1 has applied none of the deletes")
	for i := range 15 {
		require.True(t, e.ApplyNext(1))
		require.NoError(t, b.Do(&zkmem.Request{Op: zkmem.OpDelete, Path: fmt.Sprintf("/e%d", i), Version: -1}).Err)
		require.Equal(t, list(b), list(a), "member 1 applied %d deletes", i+1)
	}
	require.Len(t, list(a), 5)
}
