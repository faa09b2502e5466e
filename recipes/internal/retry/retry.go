package retry

import (
	"context"
	"errors"
	"time"

	"github.com/zksim/zksim"
)

// WaitConnected blocks until conn is connected to the session it has when
// the wait begins. It returns zksim.ErrSessionExpired once the session has
// expired, zksim.ErrClosing once the Conn is closed, zksim.ErrAuthFailed
// after an authentication failure, and ctx.Err() when ctx is done first.
//
// A wait that began on one session never ends on another: a client
// library that replaces an expired session with a new one (as Curator's
// does, or sim.Renewing) is connected again after the expiry, but every
// ephemeral node and watch of the old session is gone, so WaitConnected
// returns zksim.ErrSessionExpired when it sees StateExpired or finds the
// Conn connected with another SessionID. (A Conn that has no session yet,
// SessionID 0, takes the first it gets.)
//
// It never gives up on a session for the time the connection has been
// down: only the server expires a session, and the client hears of it when
// it reconnects (see CleanupContext).
func WaitConnected(ctx context.Context, conn zksim.Conn) error {
	return waitConnected(ctx, conn, conn.SessionID())
}

// waitConnected is WaitConnected for a wait bound to session.
func waitConnected(ctx context.Context, conn zksim.Conn, session int64) error {
	if conn.State() == zksim.StateConnected {
		return sameSession(conn, session)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Subscribe before reading the state, so no change is missed between.
	events := conn.SessionEvents(sctx)
	for {
		switch conn.State() {
		case zksim.StateConnected:
			return sameSession(conn, session)
		case zksim.StateExpired:
			return zksim.ErrSessionExpired
		case zksim.StateClosed:
			return zksim.ErrClosing
		case zksim.StateAuthFailed:
			return zksim.ErrAuthFailed
		}
		select {
		case ev, ok := <-events:
			if !ok {
				if err := ctx.Err(); err != nil {
					return err
				}
				return zksim.ErrClosing
			}
			if ev.State == zksim.StateExpired {
				// Whatever the Conn does next (a renewing client is
				// connected to a new session by now), ours is over.
				return zksim.ErrSessionExpired
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Backoff bounds the pause between two attempts that both failed with
// connection loss although the Conn said it was connected.
const (
	firstBackoff = 5 * time.Millisecond
	maxBackoff   = 500 * time.Millisecond
)

// sameSession returns zksim.ErrSessionExpired if conn no longer runs on
// session (0: none yet, any will do).
func sameSession(conn zksim.Conn, session int64) error {
	if session != 0 && conn.SessionID() != session {
		return zksim.ErrSessionExpired
	}
	return nil
}

// Do calls f until it returns anything but zksim.ErrConnectionLoss, waiting
// for the connection to come back between attempts. Use it only for calls
// that are safe to repeat (reads, deletes that accept ErrNoNode, creates
// that accept ErrNodeExists after checking the owner). It returns f's
// error, or the error of WaitConnected (session expired, closed, ctx done).
//
// Every attempt runs on the session of the first: Do remembers the Conn's
// SessionID before it, and when a retry would run on another session (a
// client library that replaced the expired session with a new one, see
// WaitConnected) it returns zksim.ErrSessionExpired instead.
func Do(ctx context.Context, conn zksim.Conn, f func() error) error {
	session := conn.SessionID()
	for losses := 0; ; losses++ {
		err := f()
		if !errors.Is(err, zksim.ErrConnectionLoss) {
			return err
		}
		if err := pause(ctx, conn, session, losses); err != nil {
			return err
		}
	}
}

// Pause is the wait between two attempts after the losses-th connection
// loss in a row (counting from 0): it waits until conn is connected, and
// from the second loss on it also backs off a little, so a connection that
// flaps does not turn the retry into a busy loop.
//
// Like WaitConnected it is bound to the session conn has when Pause is
// called, and returns zksim.ErrSessionExpired if it would end on another.
// Call it as soon as an attempt has failed: a session replaced before
// Pause is called goes unnoticed (Do, which remembers the session of its
// first attempt, has no such gap).
func Pause(ctx context.Context, conn zksim.Conn, losses int) error {
	return pause(ctx, conn, conn.SessionID(), losses)
}

// PauseOn is Pause bound to session rather than to the session conn has
// when it is called: for a call whose work belongs to a session made
// earlier (a locking-queue item's claim), so that a session replaced at
// any time since returns zksim.ErrSessionExpired, the gap before Pause
// included.
func PauseOn(ctx context.Context, conn zksim.Conn, session int64, losses int) error {
	return pause(ctx, conn, session, losses)
}

// pause is Pause for a wait bound to session.
func pause(ctx context.Context, conn zksim.Conn, session int64, losses int) error {
	if err := waitConnected(ctx, conn, session); err != nil {
		return err
	}
	if losses == 0 {
		return nil
	}
	d := firstBackoff << min(losses-1, 10)
	t := time.NewTimer(min(d, maxBackoff))
	defer t.Stop()
	select {
	case <-t.C:
		return sameSession(conn, session)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CleanupContext returns the context for deleting what a call created after
// the call's own ctx is done: it keeps ctx's values and drops its
// cancellation. It has no deadline: a cleanup goes on for as long as the
// session may be alive (a node left behind by a live session is an orphan
// that blocks every later contender until the session ends). The retries
// under it (Do, Pause, WaitConnected) end only when the session is known
// to have ended: the client heard it expired (zksim.ErrSessionExpired, or
// its library replaced it with another), its Conn was closed
// (zksim.ErrClosing) or failed to authenticate (zksim.ErrAuthFailed); see
// Final. They never presume an expiry from the time the connection has
// been down: only the server expires a session, and on a ZooKeeper
// ensemble none expires while there is no leader, and a new leader gives
// every session a full timeout again, so a client cut off for longer than
// its session timeout may come back to its live session (and to the node
// a cleanup that gave up would have left behind for good).
//
// It starts no goroutine and sends nothing. The cleanup must wait for the
// connection only through this package (Do, Pause, WaitConnected) and
// must not wait on anything else. The cancel function releases the context;
// it also ends the cleanup, for a caller that must stop early (closing the
// Conn does too).
func CleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(context.WithoutCancel(ctx))
}

// Final reports whether err means the session can no longer act: it
// expired or its Conn was closed. Ephemeral nodes of such a session are
// gone (or about to be).
func Final(err error) bool {
	return errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing)
}
