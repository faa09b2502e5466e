package election_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/zkmem"
)

// TestLeaderAfterCampaignOnALaggingMember: a Leader call that begins after
// a Campaign returned (on another client) reports that candidate, even
// when the caller's member has not applied its create yet: ZooKeeper's
// reads are sequentially consistent, so Leader syncs before it lists the
// candidates (it would answer ErrNoLeader for an election that had a
// leader all along otherwise). zkmem's sync waits while the member lags.
func TestLeaderAfterCampaignOnALaggingMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
		t.Cleanup(e.Close)
		candidate, err := e.Connect(zkmem.WithMembers(0))
		require.NoError(t, err)
		reader, err := e.Connect(zkmem.WithMembers(1))
		require.NoError(t, err)
		e.Lag(1)

		c := election.New(candidate, "/e")
		require.NoError(t, c.Campaign(ctx, []byte("v")))
		require.NotZero(t, e.Pending(1))

		type result struct {
			l   election.Leader
			err error
		}
		done := make(chan result, 1)
		go func() {
			l, err := election.New(reader, "/e").Leader(ctx)
			done <- result{l, err}
		}()
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("Leader returned %+v, %v on a member behind the Campaign", r.l, r.err)
		default: // its sync waits for the member to catch up
		}
		e.CatchUp(1)
		r := <-done
		require.NoError(t, r.err)
		require.Equal(t, c.Key(), r.l.Key)
		require.Equal(t, []byte("v"), r.l.Value)

		require.NoError(t, c.Resign(ctx))
		require.NoError(t, candidate.Close())
		require.NoError(t, reader.Close())
	})
}

// TestSingleNodeLeaderOnALaggingMember: SingleNode.Leader syncs first too.
func TestSingleNodeLeaderOnALaggingMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
		t.Cleanup(e.Close)
		candidate, err := e.Connect(zkmem.WithMembers(0))
		require.NoError(t, err)
		reader, err := e.Connect(zkmem.WithMembers(1))
		require.NoError(t, err)
		e.Lag(1)

		c := election.NewSingleNode(candidate, "/leader")
		require.NoError(t, c.Campaign(ctx, []byte("v")))
		require.NotZero(t, e.Pending(1))

		done := make(chan error, 1)
		var l election.Leader
		go func() {
			var err error
			l, err = election.NewSingleNode(reader, "/leader").Leader(ctx)
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Leader returned %+v, %v on a member behind the Campaign", l, err)
		default:
		}
		e.CatchUp(1)
		require.NoError(t, <-done)
		require.Equal(t, []byte("v"), l.Value)
		require.Equal(t, candidate.SessionID(), l.Session)

		require.NoError(t, c.Resign(ctx))
		require.NoError(t, candidate.Close())
		require.NoError(t, reader.Close())
	})
}

// TestSingleNodeCampaignAfterLossWithoutALeader: a leadership Lost to a
// session timeout with no leader keeps its node (the session lives on).
// Campaigning again must not take that node back as if nothing happened
// (the same token, a term that was declared lost): it deletes it first,
// as Election.Campaign does, and leads with a new node, a larger token.
func TestSingleNodeCampaignAfterLossWithoutALeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
		t.Cleanup(e.Close)
		conn, err := e.Connect(zkmem.WithMembers(0, 1, 2))
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		s := election.NewSingleNode(conn, "/leader")
		require.NoError(t, s.Campaign(ctx, []byte("v")))
		first := s.Token()

		e.Crash(e.Leader()) // an election starts: no member serves
		time.Sleep(2 * conn.SessionTimeout())
		synctest.Wait()
		require.Equal(t, recipes.Lost, s.State())
		_, err = e.Elect()
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, zksim.StateConnected, conn.State())

		require.NoError(t, s.Campaign(ctx, []byte("v")))
		require.Greater(t, s.Token(), first, "a new leadership with the lost one's token")
		require.NoError(t, s.Resign(ctx))
	})
}

// cancelAfterCreate is a Conn that cancels a context once a create has
// been answered: a Campaign whose ctx ends while its create's reply is
// lost.
type cancelAfterCreate struct {
	zksim.Conn
	cancel context.CancelFunc
}

func (c cancelAfterCreate) Create(ctx context.Context, p string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	defer c.cancel()
	return c.Conn.Create(ctx, p, data, mode, acl)
}

// TestSingleNodeCampaignCancelledAfterALostReplyOnALaggingMember: a
// Campaign's create is applied but its reply lost, the client moves to a
// member that has not applied the create (it never saw its zxid, so the
// member admits it), and the Campaign's ctx ends. Its cleanup syncs before
// it looks for the node, so it finds and deletes it; looking on the
// lagging member alone, it found nothing and left the node to its live
// session, blocking every other candidate.
func TestSingleNodeCampaignCancelledAfterALostReplyOnALaggingMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
		t.Cleanup(e.Close)
		conn, err := e.Connect(zkmem.WithMembers(0, 1))
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		observer, err := e.Connect(zkmem.WithMembers(2))
		require.NoError(t, err)
		t.Cleanup(func() { _ = observer.Close() })
		_, err = conn.Create(context.Background(), "/e", nil, zksim.ModePersistent, zksim.OpenACL())
		require.NoError(t, err)

		e.Lag(1)
		e.Server().Control(conn.SessionID()).LoseNextReply(zkmem.OpCreate)
		ctx, cancel := context.WithCancel(context.Background())
		s := election.NewSingleNode(cancelAfterCreate{Conn: conn, cancel: cancel}, "/e/leader")
		done := make(chan error, 1)
		go func() { done <- s.Campaign(ctx, []byte("v")) }()
		synctest.Wait()
		require.Equal(t, 1, memberOf(e, conn))
		e.CatchUp(1)
		require.ErrorIs(t, <-done, context.Canceled)
		ok, st, err := observer.Exists(context.Background(), "/e/leader")
		require.NoError(t, err)
		require.False(t, ok, "the cancelled Campaign left its node (owner %#x)", ownerOf(st))
	})
}

// memberOf returns the member c's session is connected to, -1 if none.
func memberOf(e *zkmem.Ensemble, c *zkmem.Conn) int {
	for i := range e.Size() {
		for _, id := range e.Sessions(i) {
			if id == c.SessionID() {
				return i
			}
		}
	}
	return -1
}

func ownerOf(st *zksim.Stat) int64 {
	if st == nil {
		return 0
	}
	return st.EphemeralOwner
}
