package zkwire_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
)

// TestCloseWithFaultsArmed closes a server while a fault holds a client's
// request: a reply held by a long Delay (the reader waits inside zkmem for
// it to leave), a paused session with a request unread, both at once, and
// a served zkmem server the test keeps (WithZK: zkmem.Server.Close, which
// would drop the held reply, comes only after). Close returns promptly each
// time and the client's call fails instead of waiting for the fault to end.
func TestCloseWithFaultsArmed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ownZK  bool // serve a zkmem server the test closes after the wire server
		arm    func(ctl *zkwire.Control)
		reachs bool // the held request reaches the server (is applied)
	}{
		{name: "delay", arm: func(ctl *zkwire.Control) { ctl.Delay(1000 * time.Hour) }, reachs: true},
		{name: "delay-own-zk", ownZK: true, arm: func(ctl *zkwire.Control) { ctl.Delay(1000 * time.Hour) }, reachs: true},
		{name: "pause", arm: func(ctl *zkwire.Control) { ctl.Pause() }},
		{name: "delay-then-pause", arm: func(ctl *zkwire.Control) {
			ctl.Delay(1000 * time.Hour)
			ctl.Pause()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := zkmem.Options{TickTime: 50 * time.Millisecond, MaxSessionTimeout: 20 * time.Second}
			var zkOpt zkwire.TestOption = zkwire.WithZKOptions(opts)
			var own *zkmem.Server
			if tc.ownZK {
				own = zkmem.NewServer(opts)
				t.Cleanup(own.Close)
				zkOpt = zkwire.WithZK(own)
			}
			ts, err := zkwire.Start(zkOpt)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := dial(t, ts.Addr(), 10*time.Second)
			other, _ := dial(t, ts.Addr(), 10*time.Second)
			tc.arm(control(t, ts, c.SessionID()))
			done := make(chan error, 1)
			go func() {
				_, err := c.Create("/held", nil, 0, zk.WorldACL(zk.PermAll))
				done <- err
			}()
			if tc.reachs {
				waitExists(t, other, "/held")
			} else {
				time.Sleep(100 * time.Millisecond)
			}
			closeWithin(t, 5*time.Second, ts.Close)
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("the held create succeeded though the server closed before its reply left")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the client's create still waits after the server closed")
			}
		})
	}
}

// closeWithin runs close and fails the test unless it returns within d.
func closeWithin(t *testing.T, d time.Duration, closeFn func()) {
	t.Helper()
	returned := make(chan struct{})
	go func() {
		closeFn()
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(d):
		t.Fatalf("Close did not return within %v", d)
	}
}

// waitExists polls c until path exists.
func waitExists(t *testing.T, c *zk.Conn, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, _, err := c.Exists(path)
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not created within 10s (last error %v)", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
