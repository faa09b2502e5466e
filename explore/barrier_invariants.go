package explore

import (
	"context"
	"errors"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/barrier"
)

// The barrier's invariants, judged as each call returns (set, setRefused,
// remove, wait; check has nothing to add after a step): a Wait returns nil
// only if the barrier node it began under was removed meanwhile (it is
// gone, or it is another node: another czxid), and only if the last exists
// it sent was answered "unset" (lookConn notes each answer); once Set
// returns nil the barrier is set (unless the third party deleted it
// meanwhile), once Remove returns nil it is not; the Set with the bad ACL
// fails with ErrInvalidACL, and a Set under a directory whose ACL refuses
// create fails with ErrNoAuth (at once, not by trying again without end);
// a Renewing waiter whose session expired while it waited on its watch
// returns ErrSessionExpired (checkSession).

// check checks nothing after a step: every invariant of the barrier is
// judged on a call's result as the call returns (see the top of the file).
func (f *barrierFamily) check() {}

// lookConn is a waiter's Conn: it notes what each exists of the barrier
// node answered the Wait (sawSet). What a look found is its member's
// answer, not the tree at the moment the member served it: on an ensemble
// a lagging member answers from the commits it has applied, and a sync
// only orders the reads after it behind the writes committed before the
// sync reached the leader. A Set whose create commits after the waiter's
// sync, while the waiter's exists waits on its member, is concurrent with
// that Wait, which may rightly find the barrier unset and pass (ZooKeeper's
// reads are sequentially consistent per client; the recipe promises to
// hold a Wait that begins after a Set returned, kindPassedASetBarrier).
type lookConn struct {
	*timedConn
	f   *barrierFamily
	idx int
}

// ExistsW implements zksim.Conn, noting the answer for the barrier node:
// set, unset, or (a failed look) not unset.
func (lc lookConn) ExistsW(ctx context.Context, path string) (bool, *zksim.Stat, <-chan zksim.Event, error) {
	ok, st, ch, err := lc.timedConn.ExistsW(ctx, path)
	if path == barrierPath {
		lc.f.mu.Lock()
		lc.f.sawSet[lc.idx] = ok || err != nil
		lc.f.mu.Unlock()
	}
	return ok, st, ch, err
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
	f.mu.Lock()
	f.sawSet[c.idx] = true // until a look of this Wait finds the barrier unset
	f.mu.Unlock()
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
			f.w.violate(kindPassedUnseen, "p%d's Wait returned nil, but the last exists it sent did not answer that the barrier is unset", c.idx)
		}
		if err == nil && before != 0 && f.czxid() == before {
			f.w.violate(kindPassedASetBarrier, "p%d's Wait returned while the barrier it began under (czxid %#x) is still set", c.idx, before)
		}
		return err
	})
}
