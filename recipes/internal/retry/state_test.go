package retry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/retry"
)

// stateConn is a Conn in one state, with one session id, whose session
// events channel is events (nil: no event ever comes; closed: the
// subscription ended). Only State, SessionID and SessionEvents are
// called.
type stateConn struct {
	zksim.Conn // nil
	state      zksim.State
	id         int64
	events     chan zksim.Event
}

func (c *stateConn) State() zksim.State                               { return c.state }
func (c *stateConn) SessionID() int64                                 { return c.id }
func (c *stateConn) SessionEvents(context.Context) <-chan zksim.Event { return c.events }

// TestWaitConnectedOnAnEndedSession: a wait that begins on a Conn whose
// session is known to have ended returns that end at once, without
// waiting for an event (a client library may have told its state before
// the caller's attempt failed and the wait began).
func TestWaitConnectedOnAnEndedSession(t *testing.T) {
	for _, tc := range []struct {
		state zksim.State
		want  error
	}{
		{zksim.StateExpired, zksim.ErrSessionExpired},
		{zksim.StateClosed, zksim.ErrClosing},
		{zksim.StateAuthFailed, zksim.ErrAuthFailed},
	} {
		conn := &stateConn{state: tc.state, id: 7}
		if err := retry.WaitConnected(t.Context(), conn); !errors.Is(err, tc.want) {
			t.Errorf("WaitConnected in %v: %v, want %v", tc.state, err, tc.want)
		}
		calls := 0
		err := retry.Do(t.Context(), conn, func() error {
			calls++
			if calls > 1 {
				return nil // a retry on the ended session
			}
			return zksim.ErrConnectionLoss
		})
		if !errors.Is(err, tc.want) || calls != 1 {
			t.Errorf("Do in %v: %v after %d attempts, want %v after 1", tc.state, err, calls, tc.want)
		}
	}
}

// TestWaitConnectedWithCtxDoneReturnsCtxErr: a wait that begins with its
// ctx done already (its deadline passed while the attempt before it
// failed) on a disconnected Conn, whose session-event channel the done ctx
// has closed, returns ctx's error, not ErrClosing: the Conn is not closed.
// Both the closed channel and ctx.Done are ready then, and select picks
// either, so the wait runs many times.
func TestWaitConnectedWithCtxDoneReturnsCtxErr(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	events := make(chan zksim.Event)
	close(events)
	conn := &stateConn{state: zksim.StateDisconnected, id: 7, events: events}
	for range 64 {
		if err := retry.WaitConnected(ctx, conn); !errors.Is(err, context.Canceled) {
			t.Fatalf("WaitConnected with ctx done: %v, want context.Canceled", err)
		}
		if err := retry.Pause(ctx, conn, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("Pause with ctx done: %v, want context.Canceled", err)
		}
	}
}

// TestWaitWithoutASessionTakesTheFirst: a Conn that has no session yet
// (SessionID 0) takes the first it gets: a Do whose first attempt ran
// before the session was granted retries on it.
func TestWaitWithoutASessionTakesTheFirst(t *testing.T) {
	conn := &swappingConn{} // id 0: no session yet
	calls := 0
	err := retry.Do(t.Context(), conn, func() error {
		calls++
		if calls == 1 {
			conn.id.Store(1 << 56) // granted as the attempt failed
			return zksim.ErrConnectionLoss
		}
		return nil
	})
	if err != nil || calls != 2 {
		t.Fatalf("Do: %v after %d attempts, want nil after 2", err, calls)
	}
}
