package explore

import (
	"context"
	"errors"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// earlyLeave is a double barrier's Leave with the mistake of treating one
// change as the end: it deletes our member node (the one our session
// owns), and if other members' nodes remain it waits for the directory to
// change once, then returns, although only one other member may have left.
// The last member out deletes the ready node, as the recipe does.
//
// Apart from that mistake it behaves as the recipe does: a connection loss
// is retried after a backoff, so that the machine's outcome check (which
// allows no ErrConnectionLoss from a recipe call) catches the flaw and not
// a missing retry.
func earlyLeave(ctx context.Context, conn *sim.Conn, dir string) error {
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		err := earlyLeaveOnce(ctx, conn, dir)
		if !errors.Is(err, zksim.ErrConnectionLoss) {
			return err
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// earlyLeaveOnce is one attempt of earlyLeave.
func earlyLeaveOnce(ctx context.Context, conn *sim.Conn, dir string) error {
	others, err := leaveOnce(ctx, conn, dir)
	if err != nil || !others {
		return err
	}
	names, _, w, err := conn.ChildrenW(ctx, dir)
	if err != nil {
		return err
	}
	if len(names) == 0 || len(names) == 1 && names[0] == "ready" {
		_, err = leaveOnce(ctx, conn, dir)
		return err
	}
	select {
	case <-w: // the mistake: one member left, not every one
	case <-ctx.Done():
		return ctx.Err()
	}
	_, err = leaveOnce(ctx, conn, dir)
	return err
}

// leaveOnce deletes our member node if it is there, deletes the ready node
// if no member is left, and reports whether other members' nodes remain.
func leaveOnce(ctx context.Context, conn *sim.Conn, dir string) (others bool, err error) {
	names, _, err := conn.Children(ctx, dir)
	if err != nil {
		return false, err
	}
	for _, n := range names {
		if n == "ready" {
			continue
		}
		ok, st, err := conn.Exists(ctx, dir+"/"+n)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		if st.EphemeralOwner != conn.SessionID() {
			others = true
			continue
		}
		if err := conn.Delete(ctx, dir+"/"+n, -1); err != nil && !errors.Is(err, zksim.ErrNoNode) {
			return false, err
		}
	}
	if !others {
		if err := conn.Delete(ctx, dir+"/ready", -1); err != nil && !errors.Is(err, zksim.ErrNoNode) {
			return false, err
		}
	}
	return others, nil
}
