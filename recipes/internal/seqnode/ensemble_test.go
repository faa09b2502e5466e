package seqnode

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// TestCreateProtectedAfterALostReplyOnALaggingMember: a protected create
// whose reply is lost, the client then moving to a member that has not
// applied that create yet (it never saw the create's zxid, so the member
// admits it). The lookup by GUID syncs before it lists, so it finds the
// node it made instead of creating a second one (which would be orphaned
// inside a live session); DeleteGUID likewise finds it.
func TestCreateProtectedAfterALostReplyOnALaggingMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
		t.Cleanup(e.Close)
		conn, err := e.Connect(zkmem.WithMembers(0, 1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		observer, err := e.Connect(zkmem.WithMembers(2))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = observer.Close() })
		if err := EnsurePath(ctx, conn, "/d", zksim.OpenACL()); err != nil {
			t.Fatal(err)
		}
		e.Lag(1)
		e.Server().Control(conn.SessionID()).LoseNextReply(zkmem.OpCreate)
		type result struct {
			p   string
			err error
		}
		done := make(chan result, 1)
		go func() {
			p, err := CreateProtected(ctx, conn, "/d", "g1", "n-", nil, zksim.ModeEphemeralSequential, zksim.OpenACL())
			done <- result{p, err}
		}()
		synctest.Wait()
		e.CatchUp(1)
		r := <-done
		if r.err != nil {
			t.Fatal(r.err)
		}
		children, _, err := observer.Children(ctx, "/d")
		if err != nil {
			t.Fatal(err)
		}
		if len(children) != 1 || Join("/d", children[0]) != r.p {
			t.Fatalf("children %v after CreateProtected returned %s, want it alone", children, r.p)
		}

		// DeleteGUID, after a create whose reply was lost, on a member
		// behind that create, finds it too.
		conn2, err := e.Connect(zkmem.WithMembers(0, 1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn2.Close() })
		e.Lag(1)
		e.Server().Control(conn2.SessionID()).LoseNextReply(zkmem.OpCreate)
		if _, err := conn2.Create(ctx, Join("/d", ProtectedName("g2", "n-")), nil, zksim.ModeEphemeralSequential, zksim.OpenACL()); err == nil {
			t.Fatal("create with a lost reply succeeded")
		}
		go func() { done <- result{err: DeleteGUID(ctx, conn2, "/d", "g2")} }()
		synctest.Wait()
		e.CatchUp(1)
		if r := <-done; r.err != nil {
			t.Fatal(r.err)
		}
		if children, _, err := observer.Children(ctx, "/d"); err != nil || len(children) != 1 {
			t.Fatalf("children %v (%v) after DeleteGUID, want only %s", children, err, r.p)
		}
	})
}

// lossHook is a Conn that calls afterLoss once a delete fails with a
// connection loss.
type lossHook struct {
	zksim.Conn
	afterLoss func()
}

func (c lossHook) Delete(ctx context.Context, p string, version int32) error {
	err := c.Conn.Delete(ctx, p, version)
	if errors.Is(err, zksim.ErrConnectionLoss) {
		c.afterLoss()
	}
	return err
}

// TestDeleteOwnedAfterALostReplyOnALaggingMember: DeleteOwned's delete is
// applied but its reply lost, another session creates the node of the
// same name, and the client moves to a member behind both (it never saw
// the delete's zxid, so the member admits it). DeleteOwned syncs before it
// looks again, so it finds the node another's and leaves it; looking on
// the lagging member alone, it saw its own node still there and deleted
// the other session's.
func TestDeleteOwnedAfterALostReplyOnALaggingMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
		t.Cleanup(e.Close)
		conn, err := e.Connect(zkmem.WithMembers(0, 1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		other, err := e.Connect(zkmem.WithMembers(2))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = other.Close() })
		if _, err := conn.Create(ctx, "/n", nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
			t.Fatal(err)
		}
		e.Lag(1)
		e.Server().Control(conn.SessionID()).LoseNextReply(zkmem.OpDelete)
		hooked := lossHook{Conn: conn, afterLoss: func() {
			if _, err := other.Create(ctx, "/n", nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
				t.Error(err)
			}
		}}
		done := make(chan error, 1)
		go func() { done <- DeleteOwned(ctx, hooked, "/n") }()
		synctest.Wait()
		e.CatchUp(1)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		ok, st, err := other.Exists(ctx, "/n")
		if err != nil {
			t.Fatal(err)
		}
		if !ok || st.EphemeralOwner != other.SessionID() {
			t.Fatalf("DeleteOwned deleted the node another session made after its lost delete (exists %v)", ok)
		}
	})
}
