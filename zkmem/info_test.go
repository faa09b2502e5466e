package zkmem_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// TestControlInfo: Info reports the negotiated timeout, the state and the
// faults armed and not fired yet.
func TestControlInfo(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{TickTime: time.Second})
	defer srv.Close()
	c, err := srv.Connect(zkmem.WithSessionTimeout(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctl := srv.Control(c.SessionID())
	info := ctl.Info()
	if info.ID != c.SessionID() || info.Timeout != 5*time.Second || !info.Connected || info.Paused || info.Ended || info.Armed != nil || !info.DelayedUntil.IsZero() {
		t.Fatalf("fresh session: %+v", info)
	}
	ctl.LoseNextReply(zkmem.OpCreate)
	ctl.DropNextRequest(zkmem.OpAny)
	want := []zkmem.ArmedFault{{Op: zkmem.OpCreate, Count: 1, Fault: zkmem.LoseReply}, {Op: zkmem.OpAny, Count: 1, Fault: zkmem.DropRequest}}
	if got := ctl.Info().Armed; !slices.Equal(got, want) {
		t.Fatalf("armed %v, want %v", got, want)
	}
	// The create takes the first fault armed for it: the lost reply.
	if _, err := c.Create(context.Background(), "/x", nil, zksim.ModePersistent, zksim.OpenACL()); !errors.Is(err, zksim.ErrConnectionLoss) {
		t.Fatalf("create under a lost reply: %v", err)
	}
	if got := ctl.Info().Armed; !slices.Equal(got, want[1:]) {
		t.Fatalf("armed after the lost reply fired %v, want %v", got, want[1:])
	}
	before := time.Now()
	ctl.Delay(time.Hour)
	ctl.Pause()
	info = ctl.Info()
	if !info.Paused || info.DelayedUntil.Before(before.Add(time.Hour)) {
		t.Fatalf("paused and delayed: %+v", info)
	}
	ctl.Expire()
	if info = ctl.Info(); !info.Ended || info.Connected {
		t.Fatalf("expired: %+v", info)
	}
}

// TestReset: every session ends as expired, the tree is back to the system
// nodes, and zxids and session ids go on counting.
func TestReset(t *testing.T) {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{TickTime: time.Second, ExtendedTypes: true, ContainerCheckInterval: time.Hour})
	defer srv.Close()
	c, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []string{"/a", "/a/b"} {
		if _, err := c.Create(ctx, p, []byte("x"), zksim.ModePersistent, zksim.OpenACL()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create(ctx, "/box", nil, zksim.ModeContainer, zksim.OpenACL()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/e", nil, zksim.ModeEphemeral, zksim.OpenACL()); err != nil {
		t.Fatal(err)
	}
	_, _, watch, err := c.GetW(ctx, "/a")
	if err != nil {
		t.Fatal(err)
	}
	zxid, oldID := srv.LastZxid(), c.SessionID()

	srv.Reset()

	if st := c.State(); st != zksim.StateExpired {
		t.Fatalf("a session of before the reset is %v, want expired", st)
	}
	if _, _, err := c.Get(ctx, "/a"); !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("get on an expired session: %v", err)
	}
	if ev := <-watch; ev.Type != zksim.EventNotWatching {
		t.Fatalf("a watch of before the reset got %+v, want NotWatching", ev)
	}
	if ids := srv.SessionIDs(); len(ids) != 0 {
		t.Fatalf("sessions after reset: %v", ids)
	}
	if srv.LastZxid() != zxid {
		t.Fatalf("last zxid %d after reset, want %d still", srv.LastZxid(), zxid)
	}
	n, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.SessionID() <= oldID {
		t.Fatalf("new session id %#x, want above %#x", n.SessionID(), oldID)
	}
	kids, _, err := n.Children(ctx, "/")
	if err != nil || !slices.Equal(kids, []string{"zookeeper"}) {
		t.Fatalf("children of / after reset: %q, %v", kids, err)
	}
	if ok, _, _ := n.Exists(ctx, "/a"); ok {
		t.Fatal("/a survived the reset")
	}
	p, err := n.Create(ctx, "/a", nil, zksim.ModePersistentSequential, zksim.OpenACL())
	if err != nil || p != "/a0000000000" {
		t.Fatalf("create after reset: %q, %v (a fresh root's sequence starts at 0)", p, err)
	}
	if st := srv.Stats(); st.Nodes != 5 || st.Watches != 0 || st.Sessions != 1 || st.Ephemerals != 0 {
		t.Fatalf("stats after reset and one create: %+v", st)
	}
}
