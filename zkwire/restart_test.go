package zkwire_test

import (
	"errors"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestControlReset: POST /reset ends every session (its client learns it
// expired) and empties the tree; the same address serves a clean server.
func TestControlReset(t *testing.T) {
	srv := fastServer(t)
	c, events := dial(t, srv.Addr(), 4*time.Second)
	old := c.SessionID()
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/app", "/app/x"} {
		if _, err := c.Create(p, []byte("v"), 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create("/app/e", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	control(t, srv, old).Delay(time.Hour) // reset is not held up by a delay
	if status, body := do(t, "POST", srv.ControlURL()+"/reset"); status != 200 {
		t.Fatalf("POST /reset = %d %s", status, body)
	}
	waitState(t, events, zk.StateExpired)
	if ids := srv.SessionIDs(); slices.Contains(ids, old) {
		t.Fatalf("session 0x%x lives after reset: %v", old, ids)
	}
	for _, st := range srv.Sessions() {
		if st.ID == old {
			t.Fatalf("reset kept the record of session 0x%x: %+v", old, st)
		}
	}
	n, _ := dial(t, srv.Addr(), 4*time.Second)
	if n.SessionID() <= old {
		t.Fatalf("session id 0x%x after reset, want above 0x%x", n.SessionID(), old)
	}
	kids, _, err := n.Children("/")
	if err != nil || !slices.Equal(kids, []string{"zookeeper"}) {
		t.Fatalf("children of / after reset: %q, %v", kids, err)
	}
	if _, err := n.Create("/app", nil, 0, acl); err != nil {
		t.Fatalf("create /app after reset: %v", err)
	}
}

// TestControlRestart: POST /restart?down= drops every connection and
// refuses new ones while down; then a session whose timeout outlasts the
// down time resumes with its ephemeral and data, and one whose timeout
// does not has expired, as after a real server's restart. Restart from Go
// does the same.
func TestControlRestart(t *testing.T) {
	srv := fastServer(t)
	acl := zk.WorldACL(zk.PermAll)
	long, longEvents := dial(t, srv.Addr(), 10*time.Second)
	short, _ := dial(t, srv.Addr(), 200*time.Millisecond) // its events overflow unread: go-zookeeper drops them
	if _, err := long.Create("/data", []byte("kept"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := long.Create("/long", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := short.Create("/short", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	longID, shortID := long.SessionID(), short.SessionID()
	if status, body := do(t, "POST", srv.ControlURL()+"/restart?down=1500ms"); status != 200 {
		t.Fatalf("POST /restart = %d %s", status, body)
	}
	// Down: a new connection is closed before the handshake.
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("a connection while down: read %v, want it closed", err)
	}
	nc.Close()
	if st := sessionStatus(t, srv, longID); st.State != "disconnected" {
		t.Fatalf("while down the long session is %q, want disconnected", st.State)
	}
	waitState(t, longEvents, zk.StateDisconnected)
	waitState(t, longEvents, zk.StateHasSession)
	if long.SessionID() != longID {
		t.Fatalf("session 0x%x after restart, want 0x%x resumed", long.SessionID(), longID)
	}
	waitStatus(t, srv, shortID, "expired", inState("expired"))
	if data, _, err := long.Get("/data"); err != nil || string(data) != "kept" {
		t.Fatalf("/data after restart: %q, %v", data, err)
	}
	if ok, _, err := long.Exists("/long"); err != nil || !ok {
		t.Fatalf("the resumed session's ephemeral: %v, %v", ok, err)
	}
	if ok, _, err := long.Exists("/short"); err != nil || ok {
		t.Fatalf("the expired session's ephemeral: exists %v, %v", ok, err)
	}
	// From Go, with no down time: the connection drops, the session resumes.
	srv.Restart(0)
	waitState(t, longEvents, zk.StateDisconnected)
	waitState(t, longEvents, zk.StateHasSession)
	if long.SessionID() != longID {
		t.Fatalf("session 0x%x after Restart(0), want 0x%x", long.SessionID(), longID)
	}
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}
