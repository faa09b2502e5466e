package benchmarks

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/zksim/zksim"
)

// herdLock is the exclusive lock WITHOUT predecessor watches, kept here only
// to be measured against recipes/lock: every waiter watches the children of
// the lock directory, so each release wakes all of them and each re-lists
// the whole directory (the herd effect the ZooKeeper recipe warns about).
//
// It is deliberately minimal and not for real use: no protected (GUID)
// names, no recovery from lost replies, no connection-state tracking. The
// benchmark runs it without faults.
type herdLock struct {
	conn zksim.Conn
	dir  string
	node string // our node's path while we hold or wait
}

const herdLockName = "lock-"

// Lock creates an ephemeral-sequential node in dir and blocks until it is
// the lowest, or ctx is done, or a call fails.
func (l *herdLock) Lock(ctx context.Context) error {
	p, err := l.conn.Create(ctx, l.dir+"/"+herdLockName, nil, zksim.ModeEphemeralSequential, zksim.OpenACL())
	if err != nil {
		return err
	}
	l.node = p
	me := path.Base(p)
	for {
		children, _, w, err := l.conn.ChildrenW(ctx, l.dir)
		if err != nil {
			return err
		}
		names := slices.DeleteFunc(children, func(s string) bool { return !strings.HasPrefix(s, herdLockName) })
		slices.SortFunc(names, func(a, b string) int { return strings.Compare(seqSuffix(a), seqSuffix(b)) })
		if len(names) > 0 && names[0] == me {
			return nil
		}
		if !slices.Contains(names, me) {
			return fmt.Errorf("herd lock: our node %s vanished", p)
		}
		select {
		case ev := <-w:
			if ev.Type == zksim.EventNotWatching {
				return fmt.Errorf("herd lock: watch ended: %v", ev)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Unlock deletes our node.
func (l *herdLock) Unlock(ctx context.Context) error {
	return l.conn.Delete(ctx, l.node, -1)
}

// seqSuffix returns the ten-digit sequence number at the end of name (no
// wrap-around handling: the benchmark never gets near 2^31 nodes).
func seqSuffix(name string) string {
	if len(name) < 10 {
		return name
	}
	return name[len(name)-10:]
}
