package election_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/zkmem"
)

// lateSessionConn reports SessionID 0 until its session has been asked
// for once: a client library that hands out its handle before the server
// has granted a session (go-zookeeper's zk.Connect returns so).
type lateSessionConn struct {
	zksim.Conn
	asked atomic.Bool
}

func (c *lateSessionConn) SessionID() int64 {
	if !c.asked.Swap(true) {
		return 0
	}
	return c.Conn.SessionID()
}

// TestSingleNodeCampaignWithoutASessionYet: a Campaign that begins on a
// Conn with no session yet takes the first session it gets (recipes/doc.go:
// a call belongs to the session it began on, and one that began on none
// has none to lose): it leads.
func TestSingleNodeCampaignWithoutASessionYet(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	zc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	s := election.NewSingleNode(&lateSessionConn{Conn: zc}, "/leader")
	if err := s.Campaign(ctx, []byte("v")); err != nil {
		t.Fatalf("Campaign: %v, want nil", err)
	}
	if st := s.State(); st != recipes.Held {
		t.Fatalf("state %v, want Held", st)
	}
}
