package gozk

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
)

// TestOnEventMapsEveryState: each go-zookeeper session state maps to its
// zksim state, and the ones without a counterpart are dropped.
func TestOnEventMapsEveryState(t *testing.T) {
	cases := []struct {
		in   zk.State
		want zksim.State
		kept bool
	}{
		{zk.StateConnecting, zksim.StateConnecting, true},
		{zk.StateHasSession, zksim.StateConnected, true},
		{zk.StateConnectedReadOnly, zksim.StateConnectedReadOnly, true},
		{zk.StateDisconnected, zksim.StateDisconnected, true},
		{zk.StateAuthFailed, zksim.StateAuthFailed, true},
		{zk.StateExpired, zksim.StateExpired, true},
		{zk.StateConnected, 0, false}, // TCP connected, no session yet
		{zk.StateUnknown, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.in.String(), func(t *testing.T) {
			c := fakeConn()
			c.state = zksim.StateConnecting
			c.connected = make(chan struct{})
			if tc.in == zk.StateConnecting {
				c.state = zksim.StateDisconnected
			}
			before := c.State()
			c.onEvent(zk.Event{Type: zk.EventSession, State: tc.in})
			got := c.State()
			switch {
			case tc.kept && got != tc.want:
				t.Fatalf("go-zookeeper %v: state %v, want %v", tc.in, got, tc.want)
			case !tc.kept && got != before:
				t.Fatalf("go-zookeeper %v: state %v, want it dropped (still %v)", tc.in, got, before)
			}
		})
	}
}

// TestReadOnlySession: a session granted in read-only mode completes
// Connect's wait and names the session, as a read-write one does; its
// subscribers hear ConnectedReadOnly, then Connected when the client finds
// a read-write server, in order; a write refused by the read-only server
// (code -119, which go-zookeeper does not know) is zksim.ErrNotReadOnly.
func TestReadOnlySession(t *testing.T) {
	c := fakeConn()
	c.state = zksim.StateConnecting
	c.connected = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	events := c.SessionEvents(ctx)
	t.Cleanup(func() {
		cancel()
		for range events { // the pump has ended once it closes the channel
		}
	})
	c.grantedID.Store(0x1234)
	for _, st := range []zk.State{zk.StateConnected, zk.StateConnectedReadOnly, zk.StateDisconnected, zk.StateConnecting, zk.StateHasSession} {
		c.onEvent(zk.Event{Type: zk.EventSession, State: st})
		if st == zk.StateConnectedReadOnly {
			select {
			case <-c.connected:
			default:
				t.Fatal("a read-only session did not end Connect's wait")
			}
			if c.SessionID() != 0x1234 {
				t.Fatalf("session id %#x, want 0x1234", c.SessionID())
			}
		}
	}
	want := []zksim.State{zksim.StateConnectedReadOnly, zksim.StateDisconnected, zksim.StateConnecting, zksim.StateConnected}
	for i, st := range want {
		ev := <-events
		if ev != (zksim.Event{Type: zksim.EventSession, State: st}) {
			t.Fatalf("event %d: %v, want %v", i, ev, st)
		}
	}
	select {
	case ev := <-events:
		t.Fatalf("extra event %v", ev)
	default:
	}
	if c.State() != zksim.StateConnected {
		t.Fatalf("state %v, want StateConnected", c.State())
	}
	// go-zookeeper's error for a code it does not know.
	refused := fmt.Errorf("unknown error: %v", zk.ErrCode(-119))
	if err := mapError(refused); !errors.Is(err, zksim.ErrNotReadOnly) {
		t.Fatalf("mapError(%v) = %v, want ErrNotReadOnly", refused, err)
	}
}
