package explore

import (
	"context"
	"errors"
	"path"
	"slices"

	"pgregory.net/rapid"
)

// The flaw of issue 29: state one recipe object carries from one call to
// the next. It is caught only by a machine whose processes keep their
// object across calls (lockFamily.kept); with a new object for every
// acquisition it never shows. TestFlawsOnRandomSeeds checks it with the
// flaws of issue 13.
func init() {
	Flaws = append(Flaws,
		Flaw{Name: "LockKeepsNodeOfFailedCall", Want: "two holders|token went back", Machine: Machine{cfg: worldConfig{clients: 2, faults: true}, newFamily: func(w *world, _ *rapid.T) family {
			return newLockFamily(w, keptNodeKind, true, true)
		}}},
	)
}

// keptNodeLock is a lock object meant to be locked and unlocked again and
// again (GUIDs, sequence order and cleanup are right), which remembers
// the path of its node from one call to the next. Unlock forgets it; the
// mistake is that a Lock that fails or is cancelled deletes its node but
// keeps its path, and the next Lock of the same object takes that path
// for its place in the queue, still there, and creates nothing. Its
// deleted node's sequence number is below those of every contender that
// came after it, so it holds as soon as the contenders that were ahead of
// it are gone, whoever holds, with the token of whatever it held last. (A
// node the call made itself it checks: if it is gone, the call fails.)
type keptNodeLock struct {
	naiveLock
	c *client
}

// keptNodeKind is the lock machine's kind for a keptNodeLock.
var keptNodeKind = lockKind{
	name: "lock, node kept across calls",
	dirs: []string{lockDir},
	newHold: func(_ *rapid.T, c *client) holdable {
		return &keptNodeLock{naiveLock: naiveLock{conn: c.conn, dir: lockDir, tidy: true}, c: c}
	},
}

func (l *keptNodeLock) Acquire(ctx context.Context) (err error) {
	kept := l.path != ""
	if !kept { // the mistake: a path a failed call left is taken as ours
		l.guid = nextGUID(l.c, 0)
		if err := l.create(ctx); err != nil {
			return err
		}
	}
	defer func() {
		if err != nil { // give up our node (and, the mistake, keep its path)
			_ = retryLoss(context.WithoutCancel(ctx), l.conn, func() error {
				return l.conn.Delete(context.WithoutCancel(ctx), l.path, -1)
			})
		}
	}()
	me := path.Base(l.path)
	for {
		var names []string
		err := retryLoss(ctx, l.conn, func() error {
			var err error
			names, _, err = l.conn.Children(ctx, l.dir)
			return err
		})
		if err != nil {
			return err
		}
		if !kept && !slices.Contains(names, me) {
			// A node made by this call is checked; a kept one is trusted.
			return errors.New("lock: our node vanished")
		}
		// The contender just ahead of our node: the one with the largest
		// sequence number below ours.
		ahead := ""
		for _, n := range names {
			if n != me && l.contender(n) && compareSeq(n, me) < 0 && (ahead == "" || compareSeq(n, ahead) > 0) {
				ahead = n
			}
		}
		if ahead == "" {
			_, st, err := l.conn.Exists(ctx, l.path)
			if err != nil {
				return err
			}
			switch {
			case st != nil:
				l.token = st.Czxid
			case !kept:
				return errors.New("lock: our node vanished")
			}
			l.held.Store(true)
			return nil
		}
		ok, _, w, err := l.conn.ExistsW(ctx, l.dir+"/"+ahead)
		if err != nil {
			if err = waitConnected(ctx, l.conn); err != nil {
				return err
			}
			continue
		}
		if !ok {
			continue
		}
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *keptNodeLock) Release(ctx context.Context) error {
	// Released holds no more: its State says so at once, as the recipes'
	// do.
	l.held.Store(false)
	if err := l.naiveLock.Release(ctx); err != nil {
		return err
	}
	l.path = ""
	return nil
}
