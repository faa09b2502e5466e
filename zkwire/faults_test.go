package zkwire_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
)

// fastServer allows short session timeouts: tick 50ms, timeouts in
// [100ms, 20s]. go-zookeeper waits a second before it dials again after a
// lost connection, so a session that must survive a reconnect asks for
// several seconds.
func fastServer(t *testing.T) *zkwire.TestServer {
	return zkwire.NewTestServer(t, zkwire.WithZKOptions(zkmem.Options{TickTime: 50 * time.Millisecond, MaxSessionTimeout: 20 * time.Second}))
}

// TestDisconnectResumesSessionWithWatches drops a client's connection; the
// client resumes the same session from a new connection, re-sends its
// watches with setWatches, and hears of the change it missed.
func TestDisconnectResumesSessionWithWatches(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), 5*time.Second)
	other, _ := dial(t, srv.Addr(), time.Second)
	acl := zk.WorldACL(zk.PermAll)
	if _, err := c.Create("/a", []byte("1"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/eph", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := c.GetW("/a")
	if err != nil {
		t.Fatal(err)
	}
	id := c.SessionID()
	ctl := control(t, srv, id)
	ctl.Pause() // hold the client off until the change is made
	ctl.Disconnect()
	waitState(t, events, zk.StateDisconnected)
	if _, err := other.Set("/a", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	ctl.Resume()
	waitState(t, events, zk.StateHasSession)
	if c.SessionID() != id {
		t.Fatalf("session %#x after reconnect, want %#x", c.SessionID(), id)
	}
	if ev := waitEvent(t, w); ev.Type != zk.EventNodeDataChanged || ev.Path != "/a" {
		t.Fatalf("watch after reconnect: %+v", ev)
	}
	if ok, _, _ := other.Exists("/eph"); !ok {
		t.Fatal("the ephemeral went with the connection; it belongs to the session")
	}
}

// TestExpire expires a session from the control handle: its ephemeral goes,
// another client's watch fires, and the client learns of the expiry.
func TestExpire(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), time.Second)
	other, _ := dial(t, srv.Addr(), time.Second)
	if _, err := c.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := other.ExistsW("/eph")
	if err != nil {
		t.Fatal(err)
	}
	control(t, srv, c.SessionID()).Expire()
	if ev := waitEvent(t, w); ev.Type != zk.EventNodeDeleted {
		t.Fatalf("other's watch: %+v", ev)
	}
	waitState(t, events, zk.StateExpired)
	if _, err := srv.Control(c.SessionID()); !errors.Is(err, zkwire.ErrUnknownSession) {
		t.Fatalf("Control of an expired session: %v", err)
	}
}

// TestLoseNextReply: the create is applied, the client gets a connection
// error, and finds the node on the same session after it reconnects.
func TestLoseNextReply(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), 5*time.Second)
	ctl := control(t, srv, c.SessionID())
	if err := ctl.LoseNextReply("create"); err != nil {
		t.Fatal(err)
	}
	_, err := c.Create("/lost", nil, 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("Create with its reply lost: %v", err)
	}
	waitState(t, events, zk.StateHasSession)
	if ok, _, err := c.Exists("/lost"); err != nil || !ok {
		t.Fatalf("Exists after a lost reply = %v, %v; the create was applied", ok, err)
	}
}

// TestDropNextRequest: the request never reaches the server.
func TestDropNextRequest(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), 5*time.Second)
	ctl := control(t, srv, c.SessionID())
	if err := ctl.DropNextRequest("create"); err != nil {
		t.Fatal(err)
	}
	// A read first: the fault waits for its op.
	if _, _, err := c.Exists("/"); err != nil {
		t.Fatal(err)
	}
	_, err := c.Create("/dropped", nil, 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("Create dropped: %v", err)
	}
	waitState(t, events, zk.StateHasSession)
	if ok, _, err := c.Exists("/dropped"); err != nil || ok {
		t.Fatalf("Exists after a dropped request = %v, %v; it was never applied", ok, err)
	}
	if err := ctl.DropNextRequest("bogus"); !errors.Is(err, zkwire.ErrUnknownOp) {
		t.Fatalf("unknown op name: %v", err)
	}
}

// TestPauseExpires: a paused session's pings go unheard and it expires.
func TestPauseExpires(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), 200*time.Millisecond)
	other, _ := dial(t, srv.Addr(), time.Second)
	if _, err := c.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	control(t, srv, c.SessionID()).Pause()
	waitState(t, events, zk.StateExpired)
	if ok, _, _ := other.Exists("/eph"); ok {
		t.Fatal("the paused session's ephemeral outlived it")
	}
}

// TestPauseResumeKeepsSession: a pause shorter than the timeout loses
// nothing; requests sent meanwhile are answered in order after it.
func TestPauseResumeKeepsSession(t *testing.T) {
	srv := fastServer(t)
	c, _ := dial(t, srv.Addr(), time.Second)
	ctl := control(t, srv, c.SessionID())
	ctl.Pause()
	done := make(chan error, 1)
	go func() {
		_, err := c.Create("/during", nil, 0, zk.WorldACL(zk.PermAll))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Create answered during a pause: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	ctl.Resume()
	if err := <-done; err != nil {
		t.Fatalf("Create after resume: %v", err)
	}
}

// TestDelay holds replies back.
func TestDelay(t *testing.T) {
	srv := fastServer(t)
	c, _ := dial(t, srv.Addr(), time.Second)
	ctl := control(t, srv, c.SessionID())
	ctl.Delay(150 * time.Millisecond)
	start := time.Now()
	if _, _, err := c.Get("/"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("Get answered after %v with a 150ms delay", d)
	}
}
