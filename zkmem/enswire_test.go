package zkmem_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// A transport's sessions on members (OpenSessionAt, ResumeSessionAt): a
// session is attached to its member and reads its state; a member behind
// the client refuses it before touching the session; a session moves to
// another member with its ephemeral; a read-only member refuses clients
// that do not allow read-only mode and takes those that do.
func TestEnsembleSessionsAtMembers(t *testing.T) {
	e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{ReadOnly: true})
	defer e.Close()
	sink := &recorder{}
	sess, ro, err := e.OpenSessionAt(0, 0, 0, zkmem.DefaultClientAddr, sink, false)
	require.NoError(t, err)
	require.False(t, ro)
	require.Equal(t, []int64{sess.ID()}, e.Sessions(0))

	e.Lag(1)
	resp := sess.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/eph", ACL: zksim.OpenACL(), Mode: zksim.ModeEphemeral, TTL: -1})
	require.NoError(t, resp.Err)
	require.Equal(t, 1, e.Pending(1))

	// Member 1 has not applied the create the client saw: refused, and
	// the session stays on member 0.
	_, _, err = e.ResumeSessionAt(1, sess.ID(), sess.Password(), resp.Zxid, zkmem.DefaultClientAddr, &recorder{}, false)
	require.ErrorIs(t, err, zkmem.ErrZxidAhead)
	require.Equal(t, []int64{sess.ID()}, e.Sessions(0))
	// Nor does it open a session for a client that saw that zxid.
	_, _, err = e.OpenSessionAt(1, 0, resp.Zxid, zkmem.DefaultClientAddr, &recorder{}, false)
	require.ErrorIs(t, err, zkmem.ErrZxidAhead)
	require.Nil(t, e.Sessions(1))

	// Member 2 has: the session moves there, its old connection closed.
	moved, ro, err := e.ResumeSessionAt(2, sess.ID(), sess.Password(), resp.Zxid, zkmem.DefaultClientAddr, &recorder{}, false)
	require.NoError(t, err)
	require.False(t, ro)
	require.Equal(t, []int64{sess.ID()}, e.Sessions(2))
	require.Nil(t, e.Sessions(0))
	require.Contains(t, sink.take(), "closed "+zksim.ErrConnectionLoss.Error())
	require.NoError(t, moved.Do(&zkmem.Request{Op: zkmem.OpExists, Path: "/eph"}).Err)

	// A wrong password on a member that serves: expired.
	_, _, err = e.ResumeSessionAt(2, sess.ID(), make([]byte, 16), resp.Zxid, zkmem.DefaultClientAddr, &recorder{}, false)
	require.ErrorIs(t, err, zksim.ErrSessionExpired)

	e.CatchUp(1)
	e.Isolate(0)
	require.Equal(t, zkmem.RoleReadOnly, e.Role(0))
	_, _, err = e.OpenSessionAt(0, 0, 0, zkmem.DefaultClientAddr, &recorder{}, false)
	require.ErrorIs(t, err, zkmem.ErrNoMember)
	roSess, ro, err := e.OpenSessionAt(0, 0, 0, zkmem.DefaultClientAddr, &recorder{}, true)
	require.NoError(t, err)
	require.True(t, ro)
	require.ErrorIs(t, roSess.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/no", ACL: zksim.OpenACL(), TTL: -1}).Err, zksim.ErrNotReadOnly)

	e.Crash(1)
	_, _, err = e.OpenSessionAt(1, 0, 0, zkmem.DefaultClientAddr, &recorder{}, true)
	require.ErrorIs(t, err, zkmem.ErrNoMember)
}
