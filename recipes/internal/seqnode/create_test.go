package seqnode

import (
	"context"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// stolen is a Conn whose first create of a node succeeds, after which a
// third party deletes the node and another session creates it before the
// create's caller looks at it again.
type stolen struct {
	*zkmem.Conn
	other *zkmem.Conn
	done  bool
}

func (c *stolen) Create(ctx context.Context, p string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	got, err := c.Conn.Create(ctx, p, data, mode, acl)
	if err == nil && !c.done && mode == zksim.ModeEphemeral {
		c.done = true
		if err := c.other.Delete(ctx, p, -1); err != nil {
			return "", err
		}
		if _, err := c.other.Create(ctx, p, nil, zksim.ModeEphemeral, acl); err != nil {
			return "", err
		}
	}
	return got, err
}

// TestCreateOwnedTakenAfterCreate: when our node is deleted by a third
// party and another session creates it between our create and our look at
// its owner, CreateOwned reports that another session owns it, with no
// error, as it does when the create finds the node taken.
func TestCreateOwnedTakenAfterCreate(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	mine, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	other, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	owned, st, err := CreateOwned(ctx, &stolen{Conn: mine, other: other}, "/dir/leader", nil, zksim.OpenACL())
	if err != nil || owned || st == nil || st.EphemeralOwner != other.SessionID() {
		t.Fatalf("CreateOwned = %v, %+v, %v; want false, the other session's stat, nil", owned, st, err)
	}
}
