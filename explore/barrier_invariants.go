package explore

import (
	"context"
	"errors"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/barrier"
	"github.com/zksim/zksim/zkmem"
)

// The barrier's invariants, judged as each call returns (set, setRefused,
// remove, wait; check has nothing to add after a step): a Wait returns nil
// only if the barrier node it began under was removed meanwhile (it is
// gone, or it is another node: another czxid), and only if the last exists
// it sent found the barrier unset (applied notes what each found); once Set
// returns nil the barrier is set (unless the third party deleted it
// meanwhile), once Remove returns nil it is not; the Set with the bad ACL
// fails with ErrInvalidACL, and a Set under a directory whose ACL refuses
// create fails with ErrNoAuth (at once, not by trying again without end);
// a Renewing waiter whose session expired while it waited on its watch
// returns ErrSessionExpired (checkSession).

// check checks nothing after a step: every invariant of the barrier is
// judged on a call's result as the call returns (see the top of the file).
func (f *barrierFamily) check() {}

// applied records what the exists requests of the waiters found.
func (f *barrierFamily) applied(c *client, r *zkmem.Request) {
	if r.Op != zkmem.OpExists || r.Path != barrierPath {
		return
	}
	set := f.czxid() != 0
	f.mu.Lock()
	f.sawSet[c.idx] = set
	f.mu.Unlock()
}

// set raises the barrier: once Set returns nil the barrier is set (unless
// a third party deleted it meanwhile).
func (f *barrierFamily) set(c *client) {
	b, conn := f.bs[0], c.conn
	before := f.deletes()
	f.conns[c.idx].reset()
	c.start("set", func(ctx context.Context) error {
		err := b.Set(ctx)
		f.w.explainError(c, conn, ctx, "Set", err)
		if err == nil && f.czxid() == 0 && f.deletes() == before {
			f.w.violate(kindSetNotSet, "p%d's Set returned nil but the barrier is not set", c.idx)
		}
		return err
	})
}

// setRefused has c set b, which the server refuses with want: Set returns
// want (or another documented outcome), never nil.
func (f *barrierFamily) setRefused(c *client, b *barrier.Barrier, want error, what string) {
	conn := c.conn
	c.start("set", func(ctx context.Context) error {
		err := b.Set(ctx)
		if !errors.Is(err, want) {
			f.w.explainError(c, conn, ctx, "Set "+what, err)
			if err == nil {
				f.w.violate(kindRefusedBarrierSet, "p%d's Set %s returned nil", c.idx, what)
			}
		}
		return err
	})
}

// remove lowers the barrier: once Remove returns nil it is not set (only
// p0 sets it, and p0 runs one call at a time).
func (f *barrierFamily) remove(c *client) {
	b, conn := f.bs[0], c.conn
	f.conns[c.idx].reset()
	c.start("remove", func(ctx context.Context) error {
		err := b.Remove(ctx)
		f.w.explainError(c, conn, ctx, "Remove", err)
		if err == nil && f.czxid() != 0 {
			f.w.violate(kindRemovedStillSet, "p%d's Remove returned nil but the barrier is set", c.idx)
		}
		return err
	})
}

// wait has c wait on the barrier: its Wait passes only a barrier removed
// meanwhile, and only once it saw it unset.
func (f *barrierFamily) wait(c *client) {
	b, conn := f.bs[c.idx], c.conn
	before := f.czxid()
	f.conns[c.idx].reset()
	c.start("wait", func(ctx context.Context) error {
		err := b.Wait(ctx)
		f.mu.Lock()
		sawSet, closed := f.sawSet[c.idx], f.closed[conn]
		f.mu.Unlock()
		if !closed || !errors.Is(err, zksim.ErrClosing) {
			f.w.explainError(c, conn, ctx, "Wait", err)
		}
		f.w.checkSession(c, conn, ctx, "Wait", err)
		if err == nil && sawSet {
			f.w.violate(kindPassedUnseen, "p%d's Wait returned nil, but the last time it looked the barrier was set", c.idx)
		}
		if err == nil && before != 0 && f.czxid() == before {
			f.w.violate(kindPassedASetBarrier, "p%d's Wait returned while the barrier it began under (czxid %#x) is still set", c.idx, before)
		}
		return err
	})
}
