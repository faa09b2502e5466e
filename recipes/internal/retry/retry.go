package retry

import (
	"context"
	"errors"
	"time"

	"github.com/zksim/zksim"
)

// WaitConnected blocks until conn is connected. It returns
// zksim.ErrSessionExpired once the session has expired, zksim.ErrClosing
// once the Conn is closed, zksim.ErrAuthFailed after an authentication
// failure, and ctx.Err() when ctx is done first.
func WaitConnected(ctx context.Context, conn zksim.Conn) error {
	if conn.State() == zksim.StateConnected {
		return nil
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Subscribe before reading the state, so no change is missed between.
	events := conn.SessionEvents(sctx)
	for {
		switch conn.State() {
		case zksim.StateConnected:
			return nil
		case zksim.StateExpired:
			return zksim.ErrSessionExpired
		case zksim.StateClosed:
			return zksim.ErrClosing
		case zksim.StateAuthFailed:
			return zksim.ErrAuthFailed
		}
		select {
		case _, ok := <-events:
			if !ok {
				if err := ctx.Err(); err != nil {
					return err
				}
				return zksim.ErrClosing
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

// Do calls f until it returns anything but zksim.ErrConnectionLoss, waiting
// for the connection to come back between attempts. Use it only for calls
// that are safe to repeat (reads, deletes that accept ErrNoNode, creates
// that accept ErrNodeExists after checking the owner). It returns f's
// error, or the error of WaitConnected (session expired, closed, ctx done).
func Do(ctx context.Context, conn zksim.Conn, f func() error) error {
	var losses int
	for {
		err := f()
		if !errors.Is(err, zksim.ErrConnectionLoss) {
			return err
		}
		if err := Pause(ctx, conn, losses); err != nil {
			return err
		}
		losses++
	}
}

// Pause is the wait between two attempts after the losses-th connection
// loss in a row (counting from 0): it waits until conn is connected, and
// from the second loss on it also backs off a little, so a connection that
// flaps does not turn the retry into a busy loop.
func Pause(ctx context.Context, conn zksim.Conn, losses int) error {
	if err := WaitConnected(ctx, conn); err != nil {
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
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CleanupContext returns the context for deleting what a call created after
// the call's own ctx is done: it keeps ctx's values, drops its
// cancellation, and ends after one and a half session timeouts. If the
// connection stays down that long the server has expired the session (its
// clock started no later than ours), which deletes the ephemeral nodes
// anyway.
func CleanupContext(ctx context.Context, conn zksim.Conn) (context.Context, context.CancelFunc) {
	d := conn.SessionTimeout()
	if d <= 0 {
		d = 10 * time.Second
	}
	return context.WithTimeout(context.WithoutCancel(ctx), d+d/2)
}

// Final reports whether err means the session can no longer act: it
// expired or its Conn was closed. Ephemeral nodes of such a session are gone
// (or about to be).
func Final(err error) bool {
	return errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing)
}
